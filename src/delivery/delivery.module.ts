import {
  BeforeApplicationShutdown,
  Global,
  Inject,
  Injectable,
  Module,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { EgressPolicy } from '../common/egress';
import { WorkSignal } from '../common/work-signal';
import { DeliverySettings, PortalSettings, RecordingSettings } from '../config/settings';
import { CrmLookupService } from '../crm/crm-lookup.service';
import { CrmModule } from '../crm/crm.module';
import { EmployeeDirectory } from '../crm/employee-directory';
import { BridgeMetrics } from '../metrics/bridge-metrics';
import { PortalClient } from '../portal/portal-client';
import { CallStore } from '../store/call-store';
import { LeaseStore, ReplicaRegistry } from '../store/coordination-store';
import { DeliveryDeps, DeliveryService } from './delivery.service';

/**
 * The one portal's delivery, from the application's providers (Nest fills the properties). Its replicas
 * compete for the portal's lease, each with its liveness mark.
 */
@Injectable()
class SinglePortalDelivery implements DeliveryDeps {
  @Inject(CallStore) readonly store!: CallStore;
  @Inject(PortalClient) readonly client!: PortalClient;
  @Inject(DeliverySettings) readonly delivery!: DeliverySettings;
  @Inject(BridgeMetrics) readonly metrics!: BridgeMetrics;
  @Inject(EmployeeDirectory) readonly directory!: EmployeeDirectory;
  @Inject(CrmLookupService) readonly lookups!: CrmLookupService;
  @Inject(LeaseStore) readonly leases!: LeaseStore;
  @Inject(RecordingSettings) readonly recording!: RecordingSettings;
  @Inject(PortalSettings) readonly portal!: PortalSettings;
  @Inject(ReplicaRegistry) readonly replicas!: ReplicaRegistry;
  /** Unrestricted with one portal: the operator's own RECORDING_FETCH_HOSTS. */
  @Inject(EgressPolicy) readonly egress!: EgressPolicy;
}

/** Global: intake, the admin API and the OAuth handlers wake delivery through WorkSignal without importing it. */
@Global()
@Module({
  imports: [CrmModule],
  providers: [
    SinglePortalDelivery,
    {
      provide: DeliveryService,
      useFactory: (deps: SinglePortalDelivery) => new DeliveryService(deps),
      inject: [SinglePortalDelivery],
    },
    { provide: WorkSignal, useExisting: DeliveryService },
  ],
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
