import { EgressPolicy } from '../common/egress';
import { BeforeApplicationShutdown, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { QueueStats } from '../store/call-store';
import { PortalRecord } from '../store/portal-store';
import { PortalIntake } from '../crm/portal-crm';
import { CallIntake } from '../intake/call-intake.service';
import { PortalRuntime, RuntimeDeps } from './portal-runtime';
import { DeliveryPlacement } from './delivery-placement';
import { DeploymentSettings } from './portal-scoped-settings';
import { PortalSync } from './portal-sync';
import { SeededSync } from './seeded-sync';
import { DueWork } from './due-work';
import { RegistryDeps } from './registry-deps';
import { SeededPortal, seededPortal } from './seeded-portal';
import { PortalRuntimes, RuntimeFailure } from './portal-runtimes';

/** How often each replica reads the portal list: installs, uninstalls and settings made on other replicas. */
const SYNC_MS = 2000;
/** How often idle runtimes are looked for (and dropped): at most this much past PORTAL_IDLE_SEC. */
const IDLE_SWEEP_MS = 5000;

/**
 * The portals this deployment serves, in either mode: one `PortalRuntime` per portal, on every replica
 * (lookups and PBX posts may reach any replica). With many portals (`B24_APP_MODE=multi`, docs/API.md) it
 * follows the portal records in the store and wires three parts, each with one job: `PortalSync` follows
 * the store's portal list, `PortalRuntimes` builds, opens, publishes and closes each portal's runtime (a
 * failure stays that portal's), and `DeliveryPlacement` runs delivery only for the portals the shard map
 * gives this replica. With one portal, the registry serves the record seeded from the environment
 * (`seeded-portal.ts`): built at start, delivering on every replica (their deliveries compete for its lease).
 */
@Injectable()
export class PortalRegistry implements OnApplicationBootstrap, BeforeApplicationShutdown {
  readonly replicaId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly deps: RuntimeDeps;
  private readonly runtimes: PortalRuntimes;
  private readonly placement: DeliveryPlacement;
  private readonly syncer: PortalSync;
  private readonly dueWork: DueWork;
  private readonly labelled: boolean;
  /** NODE_ENV=production: a hosted bridge, whose portals' PBXs are reached over TLS or a private network. */
  readonly production: boolean;
  /** What a portal's own settings may reach (SPEC §8): every connection made for a portal goes through it. */
  readonly egress: EgressPolicy;
  private timer?: NodeJS.Timeout;
  private sweepTimer?: NodeJS.Timeout;
  private sweeping?: Promise<unknown>;
  private stopWatchingWork?: () => void;
  private readonly modules: ModuleRef;
  /** Single mode's one portal; undefined with many portals. */
  readonly seeded?: SeededPortal;
  private seededStarted = false;
  private readonly seededSync?: SeededSync;

  constructor(registryDeps: RegistryDeps) {
    const { config, auth, portal, delivery, lookup, recording, events, intake, egress } = registryDeps;
    this.modules = registryDeps.modules;
    this.egress = egress;
    this.labelled = config.METRICS_PORTAL_LABEL;
    this.production = config.NODE_ENV === 'production';
    this.deps = {
      events: registryDeps.portalEvents,
      dials: registryDeps.dials,
      // Intake wakes delivery through WorkSignal, which is this registry: taken once the application is built.
      intake: undefined as unknown as CallIntake,
      calls: registryDeps.calls,
      tokens: registryDeps.tokens,
      leases: registryDeps.leases,
      bucket: registryDeps.bucket ?? null,
      metrics: registryDeps.metrics,
      replicaId: this.replicaId,
      positions: registryDeps.positions,
      replicas: registryDeps.replicas,
      lines: registryDeps.lines,
      transcriber: registryDeps.transcriber,
    };
    const deployment: DeploymentSettings = {
      auth,
      portal,
      delivery,
      lookup,
      recording,
      events,
      portalLabel: this.labelled,
      production: this.production,
      egress,
      intake,
    };
    if (config.B24_APP_MODE !== 'multi') {
      const { dial, follow, portalId } = registryDeps;
      this.seeded = seededPortal({ ...deployment, dial, follow, intake, portalId });
    }
    this.runtimes = new PortalRuntimes(deployment, this.deps, config.PORTAL_IDLE_SEC * 1000, this.seeded);
    this.placement = new DeliveryPlacement(registryDeps.replicas, this.replicaId, this.runtimes);
    // The seeded portal is delivered by every replica once the application is up.
    this.runtimes.owns = (portalId) => (this.seeded ? this.seededStarted : this.placement.owns(portalId));
    this.syncer = new PortalSync(registryDeps.portals, this.runtimes, this.placement);
    if (this.seeded) this.seededSync = new SeededSync(registryDeps.portals, this.runtimes, this.seeded);
    this.dueWork = new DueWork(registryDeps.calls, (due) => {
      for (const { portalId, kind } of due) this.wake(portalId, (runtime) => runtime.wakeDue(kind));
    });
  }

  /**
   * The portal's work wakes its runtime here: the built one at once; an idle one is built first where this
   * replica has a worker for it (delivery and events where it delivers the portal; a dialer is pinned).
   */
  wake(portalId: string, act: (runtime: PortalRuntime) => void): void {
    const built = this.runtimes.get(portalId);
    if (built) return act(built);
    if (!this.placement.owns(portalId)) return;
    void this.runtimes.use(portalId).then((runtime) => runtime && act(runtime));
  }

  /**
   * Single mode: stores the seeded portal's record if missing, builds and opens its runtime from the stored
   * one (its own settings over the environment's, its stored tokens read); the application's single-portal
   * parts reach it through `SeededRuntime` (single-portal.ts). Throws when it cannot be built: the bridge does not start.
   */
  async openSeeded(intake: CallIntake): Promise<PortalRuntime> {
    const seeded = this.seeded;
    if (!seeded || !this.seededSync) throw new Error('no seeded portal with B24_APP_MODE=multi');
    this.deps.intake = intake;
    await this.seededSync.open();
    const runtime = this.runtimes.get(seeded.record.portalId);
    if (!runtime) throw new Error(this.runtimes.failureOf(seeded.record.portalId)?.reason ?? 'not built');
    return runtime;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.seeded) {
      // Its intake came with `openSeeded`.
      this.seededStarted = true;
      await this.runtimes.get(this.seeded.record.portalId)?.startSeeded();
      // Its settings saved on any replica: read here within SYNC_MS, the runtime rebuilt from them.
      this.timer = setInterval(() => void this.seededSync?.sync(), SYNC_MS);
      this.timer.unref();
      return;
    }
    this.deps.intake = this.modules.get(CallIntake, { strict: false });
    await this.placement.start();
    await this.sync();
    this.timer = setInterval(() => void this.sync(), SYNC_MS);
    this.timer.unref();
    this.sweepTimer = setInterval(() => {
      this.sweeping ??= this.runtimes.dropIdle().finally(() => (this.sweeping = undefined));
    }, IDLE_SWEEP_MS);
    this.sweepTimer.unref();
    // Work another replica took in for a portal idle here (no runtime, so no listener of its own).
    this.stopWatchingWork = this.deps.calls.watchAnyNewWork((portalId) => {
      if (!this.runtimes.get(portalId)) this.wake(portalId, (runtime) => runtime.notify());
    });
    this.dueWork.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.seeded) {
      clearInterval(this.timer);
      await this.seededSync?.stop();
      return this.runtimes.closeAll();
    }
    clearInterval(this.timer);
    clearInterval(this.sweepTimer);
    this.stopWatchingWork?.();
    await this.sweeping;
    await this.dueWork.stop();
    await this.syncer.stop();
    await this.placement.stopWarming();
    // Leases are given up before the replica leaves, so the others take the portals over at once.
    await this.runtimes.closeAll();
    await this.placement.stop();
  }

  /** METRICS_PORTAL_LABEL=1: metrics carry each portal's id. */
  get portalLabel(): boolean {
    return this.labelled;
  }

  /** The portal's runtime if it is built now. */
  get(portalId: string): PortalRuntime | undefined {
    return this.runtimes.get(portalId);
  }

  /** The portal's runtime, built if it is idle (a portal's work, an admin's look that needs it). */
  use(portalId: string): Promise<PortalRuntime | undefined> {
    return this.runtimes.use(portalId);
  }

  /** The built runtime, marked used; an idle one is built in the background. */
  touch(portalId: string): PortalRuntime | undefined {
    return this.runtimes.touch(portalId);
  }

  /** The served portal's record (its settings), built or idle. */
  record(portalId: string): PortalRecord | undefined {
    return this.runtimes.record(portalId);
  }

  /** What intake reads of the portal, with no runtime. */
  intakeOf(portalId: string): PortalIntake | undefined {
    return this.runtimes.intakeOf(portalId);
  }

  /** How many portals are served here (installed), built or idle. */
  served(): number {
    return this.runtimes.served();
  }

  all(): PortalRuntime[] {
    return this.runtimes.all();
  }

  ids(): string[] {
    return this.runtimes.ids();
  }

  /** Why the portal's services could not be (re)built here, while that lasts (health; no secret). */
  failureOf(portalId: string): RuntimeFailure | undefined {
    return this.runtimes.failureOf(portalId);
  }

  /** How many portals' services could not be (re)built here. */
  failedPortals(): number {
    return this.runtimes.failed();
  }

  /** Reads the portal records now (after an install, an uninstall or a settings change on this replica). */
  sync(): Promise<void> {
    return this.seededSync ? this.seededSync.sync() : this.syncer.sync();
  }

  /** What the portals' health and metrics aggregate from: each served portal's queue. */
  queueStats(portalId: string): Promise<QueueStats> {
    return this.deps.calls.queueStats(portalId);
  }
}
