import { Logger } from '@nestjs/common';
import { OAuthCredentials } from '../auth/oauth-credentials';
import { ClickBus } from '../clicks/click';
import { AppConfig } from '../config/app-config';
import { OAuthSettings } from '../auth/oauth-settings';
import { DeliverySettings, LookupSettings, PortalSettings, RecordingSettings } from '../config/settings';
import { CrmLookupService } from '../crm/crm-lookup.service';
import { CrmSearch } from '../crm/crm-search';
import { EmployeeDirectory } from '../crm/employee-directory';
import { DeliveryService } from '../delivery/delivery.service';
import { DialWorker } from '../dialer/dial-worker';
import { PortalEventBinder } from '../events/portal-event-binder';
import { PortalEventProcessor } from '../events/portal-event-processor';
import { PortalEventsStatus } from '../events/portal-events-status';
import { CallIntake } from '../intake/call-intake.service';
import { ClickRegistry } from '../intake/click-registry';
import { BridgeMetrics } from '../metrics/bridge-metrics';
import { PortalClient } from '../portal/portal-client';
import { createPortalClient } from '../portal/portal.module';
import { CallStore } from '../store/call-store';
import { LeaseStore, SharedBucketStore } from '../store/coordination-store';
import { DialStore } from '../store/dial-store';
import { PortalEventStore } from '../store/portal-event-store';
import { PortalRecord } from '../store/portal-store';
import { TokenStore } from '../store/token-store';
import { portalDialSettings } from './portal-dial';

/**
 * An idle portal's delivery looks at the store this often (new work wakes it at once, here or by NOTIFY):
 * a thousand idle portals at the single-portal 1 s would be 2 000 queries a second.
 */
const IDLE_LOOK_MS = 5000;
/** Numbers cached per portal at most (LOOKUP_CACHE_SIZE, when smaller): a portal's clients calling now. */
const PORTAL_CACHE_SIZE = 1000;
/** Portal events: each post wakes its portal's processor; the poll finds only retries and orphans. */
const EVENT_POLL_MS = 5000;

/** What every portal's services share: the deployment's settings, stores and metrics. */
export interface RuntimeDeps {
  config: AppConfig;
  events: PortalEventStore;
  dials: DialStore;
  intake: CallIntake;
  oauth: Omit<OAuthSettings, 'portalId' | 'portalUrl'>;
  portal: PortalSettings;
  delivery: DeliverySettings;
  lookup: LookupSettings;
  recording: RecordingSettings;
  calls: CallStore;
  tokens: TokenStore;
  leases: LeaseStore;
  bucket: SharedBucketStore | null;
  metrics: BridgeMetrics;
  /** This replica's id: the owner of the leases it holds, so a survivor can take them over at its death. */
  replicaId: string;
  /** Per-portal metric labels (METRICS_PORTAL_LABEL=1), else `all`. */
  portalLabel: boolean;
}

/**
 * One installed portal's services, built for it alone (SPEC.md §8): its OAuth credentials on its own
 * endpoint, its portal client with its own request budget and operating-time state, its employee
 * directory, its lookups and cache, and — only on the replica the shard map gives it to — its delivery
 * loop. The portal's own settings (`PATCH /v1/admin/portals/:portalId`) override the deployment's here.
 */
export class PortalRuntime {
  readonly portalId: string;
  readonly credentials: OAuthCredentials;
  readonly client: PortalClient;
  readonly directory: EmployeeDirectory;
  readonly lookups: CrmLookupService;
  private readonly lookupSettings: LookupSettings;
  /** The portal's own click bus: its click registry records, its dialer (when it has dial settings) acts. */
  readonly bus = new ClickBus();
  readonly eventsStatus = new PortalEventsStatus();
  readonly dialer?: DialWorker;
  /** Handles the events posted to this replica while another delivers the portal (one pass per post). */
  private readonly oneShot: PortalEventProcessor;
  private readonly logger: Logger;
  private delivery?: DeliveryService;
  private processor?: PortalEventProcessor;
  private binder?: PortalEventBinder;
  private deliveryStopping?: Promise<void>;
  private closed = false;

  constructor(
    readonly record: PortalRecord,
    private readonly deps: RuntimeDeps,
  ) {
    this.portalId = record.portalId;
    const own = record.settings;
    const label = deps.portalLabel ? record.portalId : 'all';
    this.credentials = new OAuthCredentials(
      { ...deps.oauth, portalId: record.portalId, portalUrl: new URL(record.clientEndpoint).origin },
      deps.tokens,
    );
    this.credentials.onRefresh = (outcome) => deps.metrics.tokenRefreshes.inc({ portal: label, outcome });
    const portalSettings: PortalSettings = {
      ...deps.portal,
      rateLimitRps: own.rateLimitRps ?? deps.portal.rateLimitRps,
      burst: own.rateBurst ?? deps.portal.burst,
    };
    this.client = createPortalClient(
      this.credentials,
      portalSettings,
      record.portalId,
      deps.metrics,
      deps.bucket,
      label,
    );
    const lookup: LookupSettings = {
      ...deps.lookup,
      bindCrmEntity: own.bindCrmEntity ?? deps.lookup.bindCrmEntity,
      defaultCountry: own.defaultCountry ?? deps.lookup.defaultCountry,
      // The cache preallocates room for all its entries: 10 000 a portal would be 400 KB each of a thousand.
      cacheSize: Math.min(deps.lookup.cacheSize, PORTAL_CACHE_SIZE),
    };
    this.directory = new EmployeeDirectory(this.client, lookup, this.credentials);
    this.logger = new Logger(`Portal ${record.portalId}`);
    new ClickRegistry(this.bus, deps.calls, record.portalId).onModuleInit();
    const dial = own.dial && portalDialSettings(own.dial, own.defaultUserId ?? deps.delivery.defaultUserId);
    if (dial && 'problems' in dial) this.logger.warn(`click-to-call is off: ${dial.problems.join('; ')}`);
    this.lookupSettings = lookup;
    this.lookups = new CrmLookupService(
      new CrmSearch(this.client, lookup),
      this.directory,
      this.client,
      lookup,
      deps.metrics,
    );
    this.oneShot = this.eventProcessor(lookup);
    if (dial && 'settings' in dial) {
      this.dialer = new DialWorker(
        this.bus,
        deps.dials,
        dial.settings,
        deps.intake,
        this.directory,
        this.lookups,
        deps.metrics,
        record.portalId,
      );
      this.dialer.onModuleInit();
    }
  }

  get settings(): PortalRecord['settings'] {
    return this.record.settings;
  }

  /** Reads the stored tokens and starts the employee directory (lookups and the card need it on every replica). */
  async open(): Promise<void> {
    await this.credentials.open();
    this.lookups.onModuleInit();
    this.directory.onApplicationBootstrap();
    this.dialer?.onApplicationBootstrap();
  }

  /** An event of this portal was stored here: the processor looks now, or one pass runs if another replica delivers. */
  eventStored(): void {
    if (this.processor) return this.processor.wake();
    this.oneShot.runOnce().catch((error: Error) => this.logger.warn(`portal events: ${error.message}`));
  }

  private eventProcessor(lookup: LookupSettings): PortalEventProcessor {
    const processor = new PortalEventProcessor(
      this.deps.events,
      this.bus,
      this.lookups,
      this.deps.metrics,
      lookup,
      this.portalId,
    );
    // Each post wakes its own portal's processor; the poll only finds retries and what a dead replica held.
    processor.pollMs = EVENT_POLL_MS;
    return processor;
  }

  get delivering(): boolean {
    return this.delivery !== undefined;
  }

  /** This replica now delivers the portal: a fresh loop, which takes the portal's lease (fenced by its epoch). */
  async startDelivery(): Promise<void> {
    if (this.closed || this.delivery) return;
    await this.deliveryStopping;
    if (this.closed || this.delivery) return;
    const { deps } = this;
    const own = this.record.settings;
    const delivery: DeliverySettings = {
      ...deps.delivery,
      defaultUserId: own.defaultUserId ?? deps.delivery.defaultUserId,
    };
    this.delivery = new DeliveryService(
      deps.calls,
      this.client,
      delivery,
      deps.metrics,
      this.directory,
      this.lookups,
      deps.leases,
      deps.recording,
      deps.portal,
      {
        owner: deps.replicaId,
        metricsPortal: deps.portalLabel ? this.portalId : 'all',
        gauges: false,
        idleLookMs: IDLE_LOOK_MS,
        // Until the previous holder lets go (it finishes its batches in flight) or its replica is seen dead.
        chaseLeaseMs: deps.delivery.leaseMs + 5000,
      },
    );
    this.delivery.onApplicationBootstrap();
    // The replica delivering the portal also handles its events in the background and binds them.
    this.processor = this.eventProcessor(this.lookupSettings);
    this.processor.onApplicationBootstrap();
    this.binder = new PortalEventBinder(
      deps.config,
      this.credentials,
      this.client,
      deps.events,
      this.processor,
      deps.metrics,
      this.eventsStatus,
      this.portalId,
    );
    this.binder.onApplicationBootstrap();
  }

  /** Another replica delivers the portal now (or this one stops): the batches in flight settle, the lease goes. */
  stopDelivery(): Promise<void> {
    const delivery = this.delivery;
    const processor = this.processor;
    const binder = this.binder;
    this.delivery = this.processor = this.binder = undefined;
    if (!delivery) return this.deliveryStopping ?? Promise.resolve();
    this.deliveryStopping = Promise.all([
      delivery.stopDelivering(),
      processor?.beforeApplicationShutdown(),
      binder?.beforeApplicationShutdown(),
    ]).then(() => undefined);
    return this.deliveryStopping;
  }

  notify(): void {
    this.delivery?.notify();
  }

  resume(): void {
    this.delivery?.resume();
  }

  status(): ReturnType<DeliveryService['portalStatus']> | undefined {
    return this.delivery?.portalStatus();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.stopDelivery();
    await this.dialer?.beforeApplicationShutdown();
    this.directory.beforeApplicationShutdown();
    this.client.budget.stop();
  }
}
