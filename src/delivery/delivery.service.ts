import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { EgressPolicy } from '../common/egress';
import { RecordingHosts } from '../common/recording-hosts';
import { DeliverySettings, PortalSettings, RecordingSettings } from '../config/settings';
import { CrmLookupService } from '../crm/crm-lookup.service';
import { EmployeeDirectory } from '../crm/employee-directory';
import { BridgeMetrics } from '../metrics/bridge-metrics';
import { trackDeliveryGauges } from '../metrics/delivery-gauges';
import { PortalClient } from '../portal/portal-client';
import { CallStore, QueueStats } from '../store/call-store';
import { LeaseStore, ReplicaRegistry } from '../store/coordination-store';
import { DeliveryScheduler, PortalStatus } from './delivery-scheduler';
import { LeaseKeeper } from './lease-keeper';
import { LivenessWatch } from './liveness-watch';
import { RecordingFetcher } from './recording-fetcher';
import { Transcriber } from '../transcripts/transcriber';

/** After a replica was seen dead, how long its lease is asked for every 200 ms (the store may lag a moment). */
const TAKEOVER_CHASE_MS = 2000;

/** How a portal's delivery is run when a deployment serves many (docs/API.md). */
export interface DeliveryServiceOptions {
  /** The lease owner: this replica's id, so a survivor can take the lease over when this replica dies. */
  owner?: string;
  /** The `portal` label of this portal's metrics (`all` when they aggregate). */
  metricsPortal?: string;
  /** false: the queue gauges are filled by whoever aggregates them. */
  gauges?: boolean;
  /** With nothing due, how long before the loop looks again (SchedulerSettings.idleLookMs). */
  idleLookMs?: number;
  /** The shard map gave this replica the portal: ask for its lease every 200 ms for this long (`LeaseKeeper`). */
  chaseLeaseMs?: number;
}

/** What one portal's delivery is built from. */
export interface DeliveryDeps {
  store: CallStore;
  client: PortalClient;
  delivery: DeliverySettings;
  metrics: BridgeMetrics;
  directory: EmployeeDirectory;
  lookups: CrmLookupService;
  leases: LeaseStore;
  recording: RecordingSettings;
  portal: PortalSettings;
  options?: DeliveryServiceOptions;
  /** The seeded portal of single mode: its replicas' liveness (multi mode's shard map joins the registry instead). */
  replicas?: ReplicaRegistry;
  /**
   * What recording downloads may reach: single mode's policy (unrestricted: the operator's own
   * RECORDING_FETCH_HOSTS); a portal runtime passes the deployment's tenant rule. Never left out.
   */
  egress: EgressPolicy;
  /** The deployment's transcriber when this portal's recorded calls are transcribed (SPEC §12). */
  transcriber?: Transcriber;
  /** A call registered on a line (docs/API.md "Lines"): the portal's own line list learns of it (OAuth mode). */
  onLineUsed?: (line: string) => void;
}

/**
 * One portal's delivery on this replica: its scheduler, under the portal's lease, woken by its runtime
 * (`tenancy/portal-runtime.ts`) when work is added or credentials are renewed.
 */
export class DeliveryService {
  private readonly scheduler: DeliveryScheduler;
  private stopWatching?: () => void;
  /** Single mode: the replica's liveness mark and its watch on the others' (multi mode has the shard map). */
  private readonly liveness?: LivenessWatch;
  private readonly store: CallStore;
  private readonly client: PortalClient;

  constructor(deps: DeliveryDeps) {
    const { store, client, delivery, metrics, directory, lookups, leases, recording, egress } = deps;
    const { options = {}, replicas } = deps;
    if (!egress) throw new Error('DeliveryService: no egress policy for recording downloads');
    this.store = store;
    this.client = client;
    const portal = options.metricsPortal ?? client.portalId;
    // The pod name (hostname) tells operators which replica delivers; the suffix tells restarts apart.
    const owner = options.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    const lease = new LeaseKeeper({
      store: leases,
      portalId: client.portalId,
      owner,
      ttlMs: delivery.leaseMs,
      onAcquired: () => this.notify(),
      chaseMs: options.chaseLeaseMs,
    });
    if (replicas && options.owner === undefined) {
      // The lease owner is the replica's registered id: a survivor takes a dead deliverer's lease at once.
      const liveness = new LivenessWatch(replicas, owner, () => lease.chase(TAKEOVER_CHASE_MS));
      lease.holdOnlyWhile(() => liveness.mayDeliver());
      this.liveness = liveness;
    }
    if (deps.transcriber) {
      // Known series start at zero, so a dashboard's rate() has them from the first scrape.
      for (const outcome of ['attached', 'none', 'failed'] as const) {
        metrics.transcripts.inc({ portal, outcome }, 0);
      }
      metrics.transcribeSeconds.inc({ portal }, 0);
    }
    this.scheduler = new DeliveryScheduler(
      store,
      client,
      {
        defaultUserId: delivery.defaultUserId,
        maxBackoffMs: delivery.maxBackoffMs,
        maxAttempts: delivery.maxAttempts,
        maxInFlight: delivery.maxInFlight,
        pauseMs: 30_000,
        idleLookMs: options.idleLookMs,
        maxPayloadBytes: recording.requestMaxBytes,
      },
      lease,
      {
        observer: {
          onCommand: (step, outcome) => metrics.commands.inc({ portal, step, outcome }),
          onRetry: (reason) => metrics.retries.inc({ portal, reason }),
          onCardPopped: (elapsedMs) => metrics.ringToCard.observe({ portal }, elapsedMs / 1000),
          onRegistered: (call) => {
            if (call.party.line !== undefined) deps.onLineUsed?.(call.party.line);
          },
        },
        routing: {
          employeeFor: (extension) =>
            directory.loaded ? (directory.userIdFor(extension) ?? null) : undefined,
          employeesNeeded: () => directory.loadNow(),
          bindingFor: (phone) => lookups.bindingFor(phone),
          clientFor: (phone) => lookups.clientFor(phone),
        },
        recordings: {
          fetcher: new RecordingFetcher({
            hosts: new RecordingHosts(recording.fetchHosts),
            authorization: recording.fetchAuthorization,
            maxBytes: recording.maxBytes,
            timeoutMs: 30_000,
            egress,
          }),
          requestMaxBytes: recording.requestMaxBytes,
          maxBackoffMs: Math.min(delivery.maxBackoffMs, 60_000),
          fetchLeaseMs: 300_000,
          maxConcurrentFetches: 2,
          // A progress timeout (nothing moved for this long), so it need not cover a whole file's transfer.
          uploadTimeoutMs: deps.portal.timeoutMs,
          requestTimeoutMs: deps.portal.timeoutMs,
          quotaBytes: recording.quotaBytes,
        },
        transcripts: deps.transcriber && {
          transcriber: deps.transcriber,
          observer: {
            onOutcome: (outcome) => metrics.transcripts.inc({ portal, outcome }),
            onServiceMs: (ms) => metrics.transcribeSeconds.inc({ portal }, ms / 1000),
          },
        },
      },
    );
    if (options.gauges !== false) {
      trackDeliveryGauges(metrics, {
        portalId: portal,
        queueStats: () => this.queueStats(),
        portalStatus: () => this.portalStatus(),
        budgetWaitedMs: () => client.budget.snapshot().waitedMsTotal,
      });
    }
  }

  get portalId(): string {
    return this.client.portalId;
  }

  /** The delivery loop starts (and, single mode, the replica's liveness mark). */
  start(): void {
    // Joins in the background: a lease taken before the join completes is taken over once it has (by owner id).
    void this.liveness?.start();
    // Calls another replica took in: the replica delivering them hears of it at once.
    this.stopWatching = this.store.watchNewWork(this.client.portalId, () => this.notify());
    this.scheduler.start();
  }

  /** New or freed work may be due. */
  notify(): void {
    this.scheduler.notify();
  }

  /** New credentials were stored: delivery paused for the old ones starts again at once. */
  resume(): void {
    this.scheduler.resume();
  }

  /** The batches in flight settle and the lease is given up; the portal client stays usable (lookups). */
  async stopDelivering(): Promise<void> {
    this.stopWatching?.();
    this.stopWatching = undefined;
    await this.scheduler.stop();
    // The lease was given up: leaving now lets the others see this replica gone at once.
    await this.liveness?.stop();
  }

  portalStatus(): PortalStatus {
    return this.scheduler.portalStatus();
  }

  queueStats(): Promise<QueueStats> {
    return this.store.queueStats(this.client.portalId);
  }
}
