import { BeforeApplicationShutdown, Global, Module, OnApplicationBootstrap } from '@nestjs/common';
import { WorkSignal } from '../common/work-signal';
import { CrmModule } from '../crm/crm.module';
import { DeliveryService } from './delivery.service';

/** Global: intake, the admin API and the OAuth handlers wake delivery through WorkSignal without importing it. */
@Global()
@Module({
  imports: [CrmModule],
  providers: [DeliveryService, { provide: WorkSignal, useExisting: DeliveryService }],
  exports: [DeliveryService, WorkSignal],
})
export class DeliveryModule implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(private readonly delivery: DeliveryService) {}

  onApplicationBootstrap(): void {
    this.delivery.start();
  }

  /** Before the HTTP server and the store close: the batch in flight settles, nothing new starts. */
  beforeApplicationShutdown(): Promise<void> {
    return this.delivery.close();
  }
}
