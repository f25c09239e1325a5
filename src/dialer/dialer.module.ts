import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Module,
  OnApplicationBootstrap,
  OnModuleInit,
} from '@nestjs/common';
import { ClickBus } from '../clicks/click';
import { EgressPolicy } from '../common/egress';
import { PORTAL_ID } from '../config/portal-id';
import { DialSettings } from '../config/settings';
import { CrmLookupService } from '../crm/crm-lookup.service';
import { CrmModule } from '../crm/crm.module';
import { EmployeeDirectory } from '../crm/employee-directory';
import { CallIntake } from '../intake/call-intake.service';
import { IntakeModule } from '../intake/intake.module';
import { BridgeMetrics } from '../metrics/bridge-metrics';
import { DialStore } from '../store/dial-store';
import { DialWorker, DialWorkerDeps } from './dial-worker';

/** The one portal's dial worker, from the application's providers (Nest fills the properties). */
@Injectable()
class SinglePortalDialer implements DialWorkerDeps {
  @Inject(ClickBus) readonly bus!: ClickBus;
  @Inject(DialStore) readonly store!: DialStore;
  @Inject(DialSettings) readonly settings!: DialSettings;
  @Inject(CallIntake) readonly intake!: CallIntake;
  @Inject(EmployeeDirectory) readonly directory!: EmployeeDirectory;
  @Inject(CrmLookupService) readonly lookup!: CrmLookupService;
  @Inject(BridgeMetrics) readonly metrics!: BridgeMetrics;
  @Inject(PORTAL_ID) readonly portalId!: string;
  /** Unrestricted with one portal: the operator's own DIAL_* settings. */
  @Inject(EgressPolicy) readonly egress!: EgressPolicy;
}

/**
 * The PBX side of click-to-call (docs/API.md): subscribes to the ClickBus when DIAL_MODE is set, stores dial
 * requests and works them in the background. Store, settings, metrics and the ClickBus come from global
 * modules.
 */
@Module({
  imports: [IntakeModule, CrmModule],
  providers: [
    SinglePortalDialer,
    {
      provide: DialWorker,
      useFactory: (deps: SinglePortalDialer) => new DialWorker(deps),
      inject: [SinglePortalDialer],
    },
  ],
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
