import { Global, Module } from '@nestjs/common';
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
export class DeliveryModule {}
