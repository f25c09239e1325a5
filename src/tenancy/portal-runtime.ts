import { Logger } from '@nestjs/common';
import { OAuthCredentials } from '../auth/oauth-credentials';
import { ClickBus } from '../clicks/click';
import { CrmLookupService } from '../crm/crm-lookup.service';
import { CrmSearch } from '../crm/crm-search';
import { EmployeeDirectory } from '../crm/employee-directory';
import { DeliveryService } from '../delivery/delivery.service';
import { DialWorker } from '../dialer/dial-worker';
import { PortalEventBinder } from '../events/portal-event-binder';
import { PortalEventProcessor } from '../events/portal-event-processor';
import { PortalEventsStatus } from '../events/portal-events-status';
import { PortalLines } from '../events/portal-lines';
import { CallIntake } from '../intake/call-intake.service';
import { ClickRegistry } from '../intake/click-registry';
import { Transcriber } from '../transcripts/transcriber';
import { BridgeMetrics } from '../metrics/bridge-metrics';
import { PortalClient } from '../portal/portal-client';
import { PortalCredentials } from '../portal/portal-credentials';
import { CallStore, QueueStats } from '../store/call-store';
import { LeaseStore, ReplicaRegistry, SharedBucketStore } from '../store/coordination-store';
import { DialStore } from '../store/dial-store';
import { FollowPositionStore } from '../store/follow-position-store';
import { LineStore } from '../store/line-store';
import { PortalEventStore } from '../store/portal-event-store';
import { IntakeSink } from '../follow/intake-sink';
import { FollowHealthView } from '../follow/pbx-follower';
import { createFollowers, followViewOf, RunningFollower } from '../follow/portal-followers';
import { storedAnswers } from '../follow/stored-answers';
import { PortalRecord } from '../store/portal-store';
import { TokenStore } from '../store/token-store';
import { PortalScopedSettings } from './portal-scoped-settings';
import { PortalAccess, portalAccess } from './portal-access';
import { RuntimePlacement, SHARD } from './runtime-placement';

/** Portal events: each post wakes its portal's processor; `DueWork` finds retries and orphans. */
const EVENT_POLL_MS = 3_600_000;
/** How often a portal's PBX follower asks whether this replica holds the lease: a takeover waits at most this. */
const FOLLOW_GATE_MS = 100;

/**
 * What every portal's services share: stores, metrics and this replica's identity. No setting is here: a
 * portal runtime reads only its own `PortalScopedSettings` (tenancy/portal-scoped-settings.ts).
 */
export interface RuntimeDeps {
  events: PortalEventStore;
  dials: DialStore;
  intake: CallIntake;
  calls: CallStore;
  tokens: TokenStore;
  leases: LeaseStore;
  bucket: SharedBucketStore | null;
  metrics: BridgeMetrics;
  /** This replica's id: the owner of the leases it holds, so a survivor can take them over at its death. */
  replicaId: string;
  /** Where a followed PBX's ledger (ASTERISK_CDR_URL) keeps its position. */
  positions: FollowPositionStore;
  /** The replicas' liveness marks: a `COMPETE` portal's deliveries compete for its lease through them. */
  replicas: ReplicaRegistry;
  /** The lines added to the portal's own list (docs/API.md "Lines", OAuth mode). */
  lines: LineStore;
  /** The deployment's transcriber (TRANSCRIBE_URL), shared by every portal that turns transcripts on. */
  transcriber?: Transcriber;
}

/** How a runtime is run besides its settings. */
export interface RuntimeOptions {
  /** Kept by the registry across the portal's runtimes: what was bound stays bound when one is dropped. */
  eventsStatus?: PortalEventsStatus;
  /** Where its services run (`runtime-placement.ts`): `SHARD` unless said. */
  placement?: RuntimePlacement;
  /**
   * How the portal is reached, built once and lent to each of its runtimes (the seeded portal's: its access
   * and budget are the environment's, and the OAuth endpoints hold them). A runtime never stops what it borrowed.
   */
  access?: PortalAccess;
}

/**
 * One installed portal's services, built for it alone (docs/API.md): its OAuth credentials on its own
 * endpoint, its portal client with its own request budget and operating-time state, its employee
 * directory, its lookups and cache, and — only on the replica the shard map gives it to — its delivery
 * loop, all from the portal's resolved settings.
 *
 * Its life has steps (PortalRuntimes drives them): the constructor only builds (nothing runs, nothing is
 * read: it may throw, and then nothing needs undoing); `open()` reads the stored tokens and starts the
 * directory (it may fail: `close()` then undoes what it started); `start()`, once it is published in place
 * of the previous runtime, starts the dialer loop; `startDelivery()` where the shard map says.
 */
export class PortalRuntime {
  readonly portalId: string;
  readonly credentials: PortalCredentials;
  /** The credentials when they are an OAuth pair (every installed portal; single mode with OAuth). */
  readonly oauth?: OAuthCredentials;
  readonly placement: RuntimePlacement;
  readonly client: PortalClient;
  readonly directory: EmployeeDirectory;
  readonly lookups: CrmLookupService;
  /** The portal's own click bus: its click registry records, its dialer (when it has dial settings) acts. */
  readonly bus = new ClickBus();
  /** Kept by the registry across the portal's runtimes: what was bound stays bound when an idle runtime is dropped. */
  readonly eventsStatus: PortalEventsStatus;
  /** When the portal's work last touched this runtime (its calls, lookups, events): idle runtimes are dropped. */
  lastUsedAt = Date.now();
  readonly dialer?: DialWorker;
  private readonly clicks: ClickRegistry;
  /** Handles the events posted to this replica while another delivers the portal (one pass per post). */
  private readonly oneShot: PortalEventProcessor;
  private readonly logger: Logger;
  private delivery?: DeliveryService;
  /** The last delivery and followers (`keepsLastStatus`): what readiness shows while the bridge stops. */
  private stopped?: { delivery?: DeliveryService; followers: RunningFollower[] };
  private processor?: PortalEventProcessor;
  private binder?: PortalEventBinder;
  private lines?: PortalLines;
  private followers: RunningFollower[] = [];
  private followSink?: IntakeSink;
  private deliveryStopping?: Promise<void>;
  /** Stopping delivery: followers keep the session they had until their own stop drains it. */
  private followingStopped = false;
  private lastFollowHere = false;
  private opened = false;
  private closed = false;
  /** Its credentials and client are its own (not lent to it): closing it stops the client's budget. */
  private readonly ownsAccess: boolean;

  constructor(
    readonly record: PortalRecord,
    readonly scoped: PortalScopedSettings,
    private readonly deps: RuntimeDeps,
    options: RuntimeOptions = {},
  ) {
    this.portalId = record.portalId;
    this.eventsStatus = options.eventsStatus ?? new PortalEventsStatus();
    this.placement = options.placement ?? SHARD;
    this.ownsAccess = options.access === undefined;
    const access = options.access ?? portalAccess(record.portalId, scoped, deps);
    this.credentials = access.credentials;
    this.oauth = access.oauth;
    this.client = access.client;
    this.directory = new EmployeeDirectory(this.client, scoped.lookup, this.credentials);
    this.logger = new Logger(`Portal ${record.portalId}`);
    this.clicks = new ClickRegistry(this.bus, deps.calls, record.portalId);
    this.lookups = new CrmLookupService(
      new CrmSearch(this.client, scoped.lookup),
      this.directory,
      this.client,
      scoped.lookup,
      deps.metrics,
    );
    this.oneShot = this.eventProcessor();
    if (scoped.dial) {
      this.dialer = new DialWorker({
        bus: this.bus,
        store: deps.dials,
        settings: scoped.dial,
        intake: deps.intake,
        directory: this.directory,
        lookup: this.lookups,
        metrics: deps.metrics,
        portalId: record.portalId,
        egress: scoped.egress,
      });
      // With the registry's look no loop of its own looks at the store: `DueWork` wakes it (`wakeDue`).
      if (this.placement.sharedLook) this.dialer.idlePollMs = undefined;
    }
  }

  get settings(): PortalRecord['settings'] {
    return this.record.settings;
  }

  /** The portal's work uses this runtime now. */
  touch(): this {
    this.lastUsedAt = Date.now();
    return this;
  }

  /**
   * Kept built while the portal is installed, idle or not: a dialer and a followed PBX hold connections
   * and state of their own, and offline events are polled.
   */
  get pinned(): boolean {
    return (
      this.placement.alwaysPinned ||
      this.scoped.dial !== undefined ||
      this.scoped.follow !== undefined ||
      this.scoped.events.offline
    );
  }

  /** Nothing of the portal's runs here now (no batch in flight, no binding): closing it loses nothing. */
  get droppable(): boolean {
    if (this.pinned || this.binder?.busy || this.lines?.busy) return false;
    return (this.delivery?.portalStatus().batchesInFlight ?? 0) === 0;
  }

  /**
   * Reads the stored tokens and starts the employee directory (lookups and the card need it on every
   * replica). Throws when the store cannot be read: the caller closes this runtime and keeps the previous.
   */
  async open(): Promise<void> {
    if (this.closed) throw new Error('the portal runtime is closed');
    this.opened = true;
    await this.oauth?.open();
    for (const problem of this.scoped.problems) this.logger.warn(problem);
    this.clicks.open();
    this.dialer?.open();
    this.lookups.open();
    if (this.placement.directoryAtOpen) this.directory.start();
  }

  /** The seeded portal, once the application is up: its directory's first read, then its delivery. */
  async startSeeded(): Promise<void> {
    this.directory.start();
    await this.startDelivery();
  }

  /** Published in place of the previous runtime (closed by now): the dialer's loop starts. */
  start(): void {
    if (this.closed) return;
    this.dialer?.start();
  }

  /** An event of this portal was stored here: the processor looks now, or one pass runs if another replica delivers. */
  eventStored(): void {
    this.touch();
    if (this.processor) return this.processor.wake();
    this.oneShot.runOnce().catch((error: Error) => this.logger.warn(`portal events: ${error.message}`));
  }

  private eventProcessor(): PortalEventProcessor {
    const processor = new PortalEventProcessor({
      store: this.deps.events,
      bus: this.bus,
      lookups: this.lookups,
      metrics: this.deps.metrics,
      lookupSettings: this.scoped.lookup,
      portalId: this.portalId,
    });
    // Each post wakes its own portal's processor; the poll only finds retries and what a dead replica held
    // (`DueWork` finds them sooner; without the registry's look, the processor keeps its own poll).
    if (this.placement.sharedLook) processor.pollMs = EVENT_POLL_MS;
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
    const { deps, scoped } = this;
    this.followingStopped = false;
    // OAuth mode: the portal's own line list learns of the lines the bridge configured and registers calls on.
    const lines = this.oauth
      ? new PortalLines({
          portalId: this.portalId,
          client: this.client,
          credentials: this.credentials,
          store: deps.lines,
          lines: scoped.delivery.lines,
          boundLine: scoped.events.lineNumber,
        })
      : undefined;
    this.lines = lines;
    this.delivery = new DeliveryService({
      store: deps.calls,
      client: this.client,
      delivery: scoped.delivery,
      metrics: deps.metrics,
      directory: this.directory,
      lookups: this.lookups,
      leases: deps.leases,
      recording: scoped.recording,
      portal: scoped.portal,
      ...this.placement.delivery(scoped, deps),
      egress: scoped.egress,
      transcriber: scoped.transcribe ? deps.transcriber : undefined,
      onLineUsed: lines ? (line) => lines.seen(line) : undefined,
    });
    this.delivery.start();
    // The replica delivering the portal also handles its events in the background and binds them.
    this.processor = this.eventProcessor();
    this.processor.start();
    this.binder = new PortalEventBinder({
      settings: scoped.events,
      credentials: this.credentials,
      client: this.client,
      store: deps.events,
      processor: this.processor,
      metrics: deps.metrics,
      status: this.eventsStatus,
      portalId: this.portalId,
    });
    // Bound by an earlier runtime of the portal in this process: not again at start (a grant still binds).
    if (this.eventsStatus.boundAt !== null) this.binder.alreadyBound();
    // Replicas all delivering (competing): the one holding the lease binds, so replicas starting together
    // do not bind side by side (and one taking the lease over checks them once).
    const delivery = this.delivery;
    if (this.placement.bindsOnLease) this.binder.owns = () => delivery.portalStatus().deliveringHere;
    this.binder.start();
    if (lines) {
      if (this.placement.bindsOnLease) lines.owns = () => delivery.portalStatus().deliveringHere;
      lines.start();
    }
    this.startFollowing(this.delivery);
  }

  /**
   * The portal's PBX is followed by the replica delivering it (docs/API.md): its followers start and stop with
   * delivery, and connect only while this replica holds the portal's lease, so they move with it (a kill -9
   * hands the lease, then the PBX, to a survivor). They read the portal's own directory and country.
   */
  private startFollowing(delivery: DeliveryService): void {
    const { follow, followReading, lookup } = this.scoped;
    if (!follow) return;
    // The followers tell employees from outside numbers by the directory: its first read cannot wait.
    this.directory.loadNow();
    const sink = new IntakeSink(
      this.deps.intake,
      this.portalId,
      () => lookup.defaultCountry,
      this.deps.metrics,
    );
    try {
      this.followers = createFollowers(follow, {
        // The deployment's tenant rule (SPEC §8): a record stored before it is checked again here.
        egress: this.scoped.egress,
        sink,
        isEmployee: (number) => this.directory.userIdFor(number) !== undefined,
        internalMaxDigits: followReading.internalMaxDigits,
        recordingTemplate: followReading.recordingTemplate,
        freeswitchRecordingTemplate: followReading.freeswitchRecordingTemplate,
        timeZone: followReading.timeZone,
        ledger: {
          portalId: this.portalId,
          zone: followReading.timeZone,
          positions: this.deps.positions,
          calls: this.deps.calls,
        },
        followHere: () => this.followHere(delivery),
        gateMs: FOLLOW_GATE_MS,
        metrics: this.deps.metrics,
        answeredAt: (callIds) => storedAnswers(this.deps.calls, this.portalId, callIds),
      });
    } catch (error) {
      // The resolver built these settings already; a failure here is logged, and delivery goes on.
      this.logger.warn(`the PBX is not followed: ${(error as Error).message}`);
      return;
    }
    this.followSink = sink;
    for (const follower of this.followers) follower.start();
  }

  /**
   * Delivery may give up its lease first while it stops: the followers then keep the session they had until
   * their own stop drains it (a survivor following meanwhile only adds duplicates).
   */
  private followHere(delivery: DeliveryService): boolean {
    if (this.followingStopped) return this.lastFollowHere;
    return (this.lastFollowHere = delivery.portalStatus().deliveringHere);
  }

  /** What the portal's followers on this replica show (no secret); null when it follows no PBX. */
  followStatus(): FollowHealthView[] | null {
    if (!this.scoped.follow) return null;
    const followers = this.followers.length ? this.followers : (this.stopped?.followers ?? []);
    return followers.map((follower) => follower.status());
  }

  /** The followers as one view (the connection, with its ledger beside it); null when it follows no PBX. */
  followView(): FollowHealthView | null {
    const views = this.followStatus();
    return views && views.length ? followViewOf(views) : null;
  }

  /** The portal's queue as the store has it. */
  queueStats(): Promise<QueueStats> {
    return this.deps.calls.queueStats(this.portalId);
  }

  /** Another replica delivers the portal now (or this one stops): the batches in flight settle, the lease goes. */
  stopDelivery(): Promise<void> {
    this.followingStopped = true;
    const delivery = this.delivery;
    const processor = this.processor;
    const binder = this.binder;
    const lines = this.lines;
    this.delivery = this.processor = this.binder = this.lines = undefined;
    // Each follower reads what its PBX sent until the goodbye and hands over its held starts; what they
    // handed over is stored still (the sink retries), and the sink stops once drained.
    const followersStopped = Promise.all(this.followers.map((follower) => follower.stop()));
    if (this.placement.keepsLastStatus) this.stopped = { delivery, followers: this.followers };
    this.followers = [];
    const sink = this.followSink;
    this.followSink = undefined;
    if (!delivery) return this.deliveryStopping ?? Promise.resolve();
    this.deliveryStopping = Promise.all([
      delivery.stopDelivering(),
      processor?.close(),
      binder?.close(),
      lines?.close(),
      sink ? followersStopped.then(() => drained(sink)) : followersStopped,
    ]).then(() => undefined);
    return this.deliveryStopping;
  }

  notify(): void {
    this.touch();
    this.delivery?.notify();
  }

  /** The registry's shared look found work of `kind` due for this portal: its worker here looks now. */
  wakeDue(kind: 'call' | 'dial' | 'event'): void {
    this.touch();
    if (kind === 'call') this.delivery?.notify();
    else if (kind === 'event') this.processor?.wake();
    else this.dialer?.wakeUp();
  }

  resume(): void {
    this.delivery?.resume();
  }

  status(): ReturnType<DeliveryService['portalStatus']> | undefined {
    return (this.delivery ?? this.stopped?.delivery)?.portalStatus();
  }

  /** Stops whatever was started; safe on a runtime never opened, half opened, or closed already. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.stopDelivery();
    if (this.opened) {
      await this.dialer?.close();
      this.directory.close();
    }
    if (this.ownsAccess) this.client.budget.stop();
  }
}

/** At most this long a stopping follower's sink keeps storing what it was handed (the store may be down). */
const SINK_DRAIN_MS = 5000;

async function drained(sink: IntakeSink): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([sink.idle(), new Promise((resolve) => (timer = setTimeout(resolve, SINK_DRAIN_MS)))]);
  clearTimeout(timer);
  sink.stop();
}
