import { BeforeApplicationShutdown, Module, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import { CrmModule } from '../crm/crm.module';
import { IntakeModule } from '../intake/intake.module';
import { DialWorker } from './dial-worker';

/**
 * The PBX side of click-to-call (docs/API.md): subscribes to the ClickBus when DIAL_MODE is set, stores dial
 * requests and works them in the background. Store, settings, metrics and the ClickBus come from global
 * modules.
 */
@Module({
  imports: [IntakeModule, CrmModule],
  providers: [DialWorker],
  exports: [DialWorker],
})
export class DialerModule implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(private readonly dialer: DialWorker) {}

  onModuleInit(): void {
    this.dialer.open();
  }

  onApplicationBootstrap(): void {
    this.dialer.start();
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.dialer.close();
  }
}
