import { Logger } from '@nestjs/common';
import { RecordingHosts } from '../common/recording-hosts';
import { PortalIntake } from '../crm/portal-crm';
import { PortalEventsStatus } from '../events/portal-events-status';
import { PortalRecord } from '../store/portal-store';
import { PortalRuntime, RuntimeDeps } from './portal-runtime';
import { PortalAccess, portalAccess } from './portal-access';
import { DeploymentSettings, PortalScopedSettings, resolvePortalSettings } from './portal-scoped-settings';
import { SeededPortal } from './seeded-portal';
import { COMPETE, SHARD } from './runtime-placement';

/** Why a portal's runtime could not be (re)built here; no value of its settings, no secret. */
export interface RuntimeFailure {
  /** The record version that failed (a later sync tries it again). */
  updatedAt: number;
  reason: string;
  since: number;
  attempts: number;
}

/**
 * The runtime lifecycle: every served portal's record, and a `PortalRuntime` for those whose work is under
 * way (docs/decisions/tenancy.md §5). A runtime is built on the portal's first work (`use`: a call, a
 * lookup, an event, delivery placed here) and dropped once idle for `idleMs` (`dropIdle`), unless it is
 * pinned (a dialer, a followed PBX, offline events). What intake reads of a portal (its settings) comes
 * from the record, with no runtime.
 *
 * A runtime is replaced as build → open → publish with rollback. A new runtime is built and opened beside
 * the current one; only then is the current one closed and the new one published and started. If building
 * or opening throws, the new runtime is closed, the current one (if any) keeps serving, and the failure
 * becomes that portal's flag until a later attempt works. A build that a newer record overtook while it
 * opened (a sync read the portal's change meanwhile) is closed instead of published, so settings read
 * earlier never replace those read later. Nothing here stops another portal.
 */
export class PortalRuntimes {
  private readonly logger = new Logger('Portals');
  /** Every active portal's record, as the last sync read it. */
  private readonly records = new Map<string, PortalRecord>();
  private readonly runtimes = new Map<string, PortalRuntime>();
  private readonly failures = new Map<string, RuntimeFailure>();
  /** Builds under way, so two uses of an idle portal build it once. */
  private readonly building = new Map<string, Promise<PortalRuntime | undefined>>();
  /** What intake reads of a portal, by record version: made on its first post, not per runtime. */
  private readonly intakes = new Map<string, { updatedAt: number; intake: PortalIntake }>();
  /** Portals whose events a runtime of this process bound: kept when the runtime is dropped. */
  private readonly eventStatuses = new Map<string, PortalEventsStatus>();
  /** Whether this replica delivers the portal (the shard map): a runtime built here then starts delivery. */
  owns: (portalId: string) => boolean = () => false;
  /** Shutting down: nothing more is built. */
  private closing = false;

  constructor(
    private readonly deployment: DeploymentSettings,
    private readonly deps: RuntimeDeps,
    /** A runtime unused this long is dropped (PORTAL_IDLE_SEC). */
    private readonly idleMs = Infinity,
    /** Single mode's one portal, seeded from the environment: its stored settings over the environment's. */
    private readonly seeded?: SeededPortal,
  ) {}

  /**
   * The portal's settings from its record over the deployment's; the seeded portal's over the environment's
   * (its own defaults: access, click-to-call, followed PBX, recording downloads).
   */
  private scopedOf(record: PortalRecord): PortalScopedSettings {
    return resolvePortalSettings(
      record,
      this.deployment,
      this.isSeeded(record) ? this.seeded?.defaults : undefined,
    );
  }

  /**
   * The seeded portal's credentials and client, built with its first runtime and lent to each later one: the
   * environment's access and budget do not change with its settings, and the OAuth endpoints hold them.
   */
  private seededAccess?: PortalAccess;

  private isSeeded(record: PortalRecord): boolean {
    return this.seeded?.record.portalId === record.portalId;
  }

  /** The portal's runtime if it is built now (nothing is built). */
  get(portalId: string): PortalRuntime | undefined {
    return this.runtimes.get(portalId);
  }

  /** The portal's record if it is served (installed, read by the last sync). */
  record(portalId: string): PortalRecord | undefined {
    return this.records.get(portalId);
  }

  /** How many portals are served (installed), built or idle. */
  served(): number {
    return this.records.size;
  }

  /**
   * The portal's runtime, built (and opened, and delivering where this replica delivers the portal) if it
   * is idle: what a portal's work calls. Undefined for a portal not served, or whose runtime cannot be
   * built now (its failure says why).
   */
  use(portalId: string): Promise<PortalRuntime | undefined> {
    if (this.closing) return Promise.resolve(undefined);
    const built = this.runtimes.get(portalId);
    if (built) return Promise.resolve(built.touch());
    const record = this.records.get(portalId);
    if (!record) return Promise.resolve(undefined);
    let building = this.building.get(portalId);
    if (!building) {
      building = this.buildLatest(portalId).finally(() => this.building.delete(portalId));
      this.building.set(portalId, building);
    }
    return building;
  }

  /**
   * Builds the portal's latest record. A build a newer record overtook while it opened is closed unpublished
   * (`publish`); then the runtime another build published for the newest record serves, or else that record
   * is built. Ends: each round builds a newer record than the last.
   */
  private async buildLatest(portalId: string): Promise<PortalRuntime | undefined> {
    for (;;) {
      const record = this.records.get(portalId);
      if (!record || this.closing) return undefined;
      const outcome = await this.publish(record);
      const current = this.runtimes.get(portalId);
      if (outcome === 'published') return current;
      if (outcome === 'failed') return undefined;
      const latest = this.records.get(portalId);
      if (current && (!latest || current.record.updatedAt >= latest.updatedAt)) return current.touch();
    }
  }

  /** The built runtime, marked used; an idle portal's is built in the background (for the next ask). */
  touch(portalId: string): PortalRuntime | undefined {
    const built = this.runtimes.get(portalId);
    if (built) return built.touch();
    if (this.records.has(portalId)) void this.use(portalId);
    return undefined;
  }

  /** What intake reads of the portal: its own DIAL_MATCH_SEC and recording hosts (from its record). */
  intakeOf(portalId: string): PortalIntake | undefined {
    const record = this.records.get(portalId);
    if (!record) return undefined;
    const made = this.intakes.get(portalId);
    if (made?.updatedAt === record.updatedAt) return made.intake;
    const scoped = this.scopedOf(record);
    const hosts = new RecordingHosts(scoped.recording.fetchHosts);
    const intake: PortalIntake = {
      dialMatchMs: scoped.delivery.dialMatchMs,
      lines: scoped.delivery.lines,
      recordingFetch: hosts.empty
        ? undefined
        : { fetchable: (url) => hosts.allows(url), waitMs: scoped.recording.waitMs },
    };
    this.intakes.set(portalId, { updatedAt: record.updatedAt, intake });
    return intake;
  }

  /**
   * The sync read the portal's record (new or changed): kept, and its runtime rebuilt if it is built or
   * pinned; an idle portal's runtime waits for its first work.
   */
  async recordIs(record: PortalRecord): Promise<void> {
    this.records.set(record.portalId, record);
    const { portalId } = record;
    // A failed build is tried again each sync, as a built or pinned portal's change is.
    const pinned = pinnedRecord(record) || this.isSeeded(record);
    if (this.runtimes.has(portalId) || this.failures.has(portalId) || pinned) {
      await this.replace(record);
    }
  }

  /** Whether the record of this version was read (nothing to do for it). */
  known(portalId: string, updatedAt: number): boolean {
    return this.records.get(portalId)?.updatedAt === updatedAt && !this.failures.has(portalId);
  }

  /** Every active portal's id. */
  servedIds(): string[] {
    return [...this.records.keys()];
  }

  /**
   * Closes the runtimes unused for `idleMs` with nothing of theirs running (their delivery gives its lease
   * up; their calls stay stored, and their next work builds them again). Returns how many were dropped.
   */
  async dropIdle(now = Date.now()): Promise<number> {
    const idle = [...this.runtimes.values()].filter(
      (runtime) => now - runtime.lastUsedAt >= this.idleMs && runtime.droppable,
    );
    for (const runtime of idle) {
      if (this.runtimes.get(runtime.portalId) !== runtime) continue;
      this.runtimes.delete(runtime.portalId);
      if (runtime.eventsStatus.boundAt !== null) {
        this.eventStatuses.set(runtime.portalId, runtime.eventsStatus);
      }
      await runtime
        .close()
        .catch((error: Error) => this.logger.warn(`portal ${runtime.portalId}: ${error.message}`));
    }
    return idle.length;
  }

  all(): PortalRuntime[] {
    return [...this.runtimes.values()];
  }

  ids(): string[] {
    return [...this.runtimes.keys()].sort();
  }

  /** The portal's last failed (re)build, while it lasts. */
  failureOf(portalId: string): RuntimeFailure | undefined {
    return this.failures.get(portalId);
  }

  failed(): number {
    return this.failures.size;
  }

  /**
   * Builds and opens the record's runtime, then closes the published one and publishes the new one. Returns
   * whether the new one serves; on failure the previous one (if any) still does.
   */
  async replace(record: PortalRecord): Promise<boolean> {
    return (await this.publish(record)) === 'published';
  }

  /**
   * `replace`, saying why not: `failed` (the failure is the portal's flag), or `superseded`. A build never
   * publishes over a newer record's runtime: when its open ends, if the sync has read a newer record of the
   * portal (its versions only grow: `updated_at`), or a build of a newer (or the same) record was published
   * meanwhile, or the portal is gone, this runtime is closed unpublished and whatever serves stays.
   */
  private async publish(record: PortalRecord): Promise<'published' | 'superseded' | 'failed'> {
    const { portalId } = record;
    let runtime: PortalRuntime | undefined;
    try {
      const scoped = this.scopedOf(record);
      const seeded = this.isSeeded(record);
      if (seeded) this.seededAccess ??= portalAccess(portalId, scoped, this.deps);
      runtime = new PortalRuntime(record, scoped, this.deps, {
        eventsStatus: this.eventStatuses.get(portalId),
        placement: seeded ? COMPETE : SHARD,
        access: seeded ? this.seededAccess : undefined,
      });
      await runtime.open();
    } catch (error) {
      await runtime?.close().catch(() => undefined);
      // An older record's failure is no flag: a newer record is (being) built.
      if (this.superseded(record)) return 'superseded';
      this.fail(record, error);
      return 'failed';
    }
    const previous = this.runtimes.get(portalId);
    if (this.superseded(record, previous)) return this.discard(runtime);
    if (previous) {
      await previous
        .close()
        .catch((error: Error) =>
          this.logger.warn(`portal ${portalId}: closing its old services: ${error.message}`),
        );
      // Another build may have published while the previous closed: the newer (or the first of equals) stays.
      if (this.superseded(record, previous)) return this.discard(runtime);
    }
    // The portal's bucket did not empty with the old services: the new budget goes on from its level.
    if (previous) runtime.client.budget.continueFrom?.(previous.client.budget);
    this.runtimes.set(portalId, runtime);
    runtime.start();
    const failure = this.failures.get(portalId);
    this.failures.delete(portalId);
    if (failure) {
      this.logger.log(`portal ${portalId} is served again (after ${failure.attempts} failed attempts)`);
    }
    // The seeded portal rebuilt once the application is up (its settings changed): directory, then delivery.
    if (this.owns(portalId)) await (this.isSeeded(record) ? runtime.startSeeded() : runtime.startDelivery());
    return 'published';
  }

  /**
   * Whether a runtime of `record` must not be published: the portal is gone, the sync read a newer record,
   * or what is published now is of a newer record or of the same one (unless it is `replacing`, the runtime
   * this build replaces, of an older record or flagged as failed).
   */
  private superseded(record: PortalRecord, replacing?: PortalRuntime): boolean {
    const latest = this.records.get(record.portalId);
    if (!latest || latest.updatedAt > record.updatedAt) return true;
    const published = this.runtimes.get(record.portalId);
    if (!published) return false;
    // Replacing a runtime of this very record is a retry after a failure; without one, a second build of it.
    if (published === replacing) {
      return published.record.updatedAt >= record.updatedAt && !this.failures.has(record.portalId);
    }
    return published.record.updatedAt >= record.updatedAt;
  }

  private async discard(runtime: PortalRuntime): Promise<'superseded'> {
    await runtime
      .close()
      .catch((error: Error) =>
        this.logger.warn(`portal ${runtime.portalId}: closing an overtaken build: ${error.message}`),
      );
    return 'superseded';
  }

  /** The portal is no longer installed (or was purged): its runtime closes, its calls stay stored. */
  async drop(portalId: string): Promise<void> {
    this.failures.delete(portalId);
    this.records.delete(portalId);
    this.intakes.delete(portalId);
    this.eventStatuses.delete(portalId);
    const runtime = this.runtimes.get(portalId);
    if (!runtime) return;
    this.runtimes.delete(portalId);
    this.logger.log(`portal ${portalId} is no longer installed: paused`);
    await runtime.close();
  }

  /** Every portal known here, served or failed: what the sync compares with the store's list. */
  knownIds(): string[] {
    return [...new Set([...this.records.keys(), ...this.runtimes.keys(), ...this.failures.keys()])];
  }

  async closeAll(): Promise<void> {
    this.closing = true;
    // Builds under way publish first, then close with the rest.
    await Promise.allSettled([...this.building.values()]);
    const runtimes = [...this.runtimes.values()];
    this.runtimes.clear();
    await Promise.all(runtimes.map((runtime) => runtime.close()));
    this.seededAccess?.client.budget.stop();
  }

  private fail(record: PortalRecord, error: unknown): void {
    const reason = safeReason(error);
    const earlier = this.failures.get(record.portalId);
    const same = earlier?.updatedAt === record.updatedAt && earlier.reason === reason;
    this.failures.set(record.portalId, {
      updatedAt: record.updatedAt,
      reason,
      since: same ? earlier.since : Date.now(),
      attempts: (same ? earlier.attempts : 0) + 1,
    });
    // Once per distinct failure: the sync retries every few seconds.
    if (!same) {
      this.logger.warn(
        `portal ${record.portalId}: its services could not be ${this.runtimes.has(record.portalId) ? 'rebuilt (the previous ones keep serving)' : 'built (not served here yet)'}: ${reason}; retried at the next sync`,
      );
    }
  }
}

/** A portal whose runtime stays built while it is installed (PortalRuntime.pinned, read from its record). */
function pinnedRecord(record: PortalRecord): boolean {
  return record.settings.dial !== undefined || record.settings.follow !== undefined;
}

/** An error's message fit for logs and health: no URL credentials, bounded. */
export function safeReason(error: unknown): string {
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return message.replace(/\/\/[^/@\s]*@/g, '//***@').slice(0, 300);
}
