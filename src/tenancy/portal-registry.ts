import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { AppConfig } from '../config/app-config';
import {
  AuthSettings,
  DeliverySettings,
  LookupSettings,
  PortalSettings,
  RecordingSettings,
} from '../config/settings';
import { BridgeMetrics } from '../metrics/bridge-metrics';
import { ShardMap } from '../delivery/shard-map';
import { CallStore, QueueStats } from '../store/call-store';
import { LeaseStore, ReplicaRegistry, SharedBucketStore } from '../store/coordination-store';
import { PortalRecord, PortalStore } from '../store/portal-store';
import { TokenStore } from '../store/token-store';
import { PortalEventStore } from '../store/portal-event-store';
import { DialStore } from '../store/dial-store';
import { CallIntake } from '../intake/call-intake.service';
import { PortalRuntime, RuntimeDeps } from './portal-runtime';
import { Shards } from './shards';

/** How often each replica reads the portal list: installs, uninstalls and settings made on other replicas. */
const SYNC_MS = 2000;

/**
 * The portals this deployment serves (`B24_APP_MODE=multi`, SPEC.md §8): one `PortalRuntime` per installed
 * portal, on every replica (lookups and PBX posts may reach any replica), following the portal records in
 * the store. Delivery runs only for the portals the shard map gives this replica.
 */
@Injectable()
export class PortalRegistry implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Portals');
  private readonly runtimes = new Map<string, PortalRuntime>();
  private readonly deps: RuntimeDeps;
  readonly replicaId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly shards: Shards;
  private timer?: NodeJS.Timeout;
  private syncing?: Promise<void>;
  private syncAgain = false;
  private stopped = false;

  constructor(
    config: AppConfig,
    auth: AuthSettings,
    portal: PortalSettings,
    delivery: DeliverySettings,
    lookup: LookupSettings,
    recording: RecordingSettings,
    calls: CallStore,
    tokens: TokenStore,
    leases: LeaseStore,
    bucket: SharedBucketStore,
    metrics: BridgeMetrics,
    private readonly portals: PortalStore,
    replicas: ReplicaRegistry,
    events: PortalEventStore,
    dials: DialStore,
    private readonly modules: ModuleRef,
  ) {
    // The replica id is the lease owner too: a survivor takes a dead replica's leases at once (its lock is gone).
    this.shards = new ShardMap(replicas, this.replicaId, () => Promise.resolve(this.ids()));
    this.deps = {
      config,
      events,
      dials,
      // Intake wakes delivery through WorkSignal, which is this registry: taken once the application is built.
      intake: undefined as unknown as CallIntake,
      oauth: {
        oauthUrl: new URL(auth.oauthUrl ?? 'http://unset.invalid').origin,
        clientId: auth.clientId ?? '',
        clientSecret: auth.clientSecret ?? '',
        publicUrl: auth.publicUrl?.replace(/\/+$/, ''),
        apiVersion: portal.apiVersion,
        stateTtlMs: auth.stateTtlMs,
        timeoutMs: portal.timeoutMs,
      },
      portal,
      delivery,
      lookup,
      recording,
      calls,
      tokens,
      leases,
      bucket: bucket ?? null,
      metrics,
      replicaId: this.replicaId,
      portalLabel: config.METRICS_PORTAL_LABEL,
    };
  }

  async onApplicationBootstrap(): Promise<void> {
    this.deps.intake = this.modules.get(CallIntake, { strict: false });
    await this.shards.start();
    this.shards.onChange(() => void this.placeDelivery());
    await this.sync();
    this.timer = setInterval(() => void this.sync(), SYNC_MS);
    this.timer.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.syncing;
    // Leases are given up before the replica leaves, so the others take the portals over at once.
    await Promise.all([...this.runtimes.values()].map((runtime) => runtime.close()));
    this.runtimes.clear();
    await this.shards.stop();
  }

  /** METRICS_PORTAL_LABEL=1: metrics carry each portal's id. */
  get portalLabel(): boolean {
    return this.deps.portalLabel;
  }

  get(portalId: string): PortalRuntime | undefined {
    return this.runtimes.get(portalId);
  }

  all(): PortalRuntime[] {
    return [...this.runtimes.values()];
  }

  ids(): string[] {
    return [...this.runtimes.keys()].sort();
  }

  /** Reads the portal records now (after an install, an uninstall or a settings change on this replica). */
  sync(): Promise<void> {
    if (this.syncing) {
      this.syncAgain = true;
      return this.syncing;
    }
    this.syncing = this.syncOnce()
      .catch((error: Error) => this.logger.warn(`cannot read the portal list: ${error.message}`))
      .finally(() => {
        this.syncing = undefined;
        if (this.syncAgain && !this.stopped) {
          this.syncAgain = false;
          void this.sync();
        }
      });
    return this.syncing;
  }

  /** What the portals' health and metrics aggregate from: each served portal's queue. */
  queueStats(portalId: string): Promise<QueueStats> {
    return this.deps.calls.queueStats(portalId);
  }

  private async syncOnce(): Promise<void> {
    const versions = await this.portals.portalVersions();
    const seen = new Set<string>();
    for (const version of versions) {
      if (this.stopped) return;
      if (version.status !== 'active') continue;
      seen.add(version.portalId);
      const current = this.runtimes.get(version.portalId);
      if (current && current.record.updatedAt === version.updatedAt) continue;
      const record = await this.portals.findPortal(version.portalId);
      if (!record || record.status !== 'active') continue;
      await this.replace(record, current);
    }
    for (const [portalId, runtime] of this.runtimes) {
      if (seen.has(portalId)) continue;
      // Uninstalled (or purged): paused. Its calls stay stored until it comes back or its data is deleted.
      this.runtimes.delete(portalId);
      this.logger.log(`portal ${portalId} is no longer installed: paused`);
      await runtime.close();
    }
    await this.shards.refreshPortals();
    await this.placeDelivery();
  }

  /** A new portal, or a changed one (reinstalled, new settings): its services are built again from the record. */
  private async replace(record: PortalRecord, current: PortalRuntime | undefined): Promise<void> {
    if (current) await current.close();
    const runtime = new PortalRuntime(record, this.deps);
    this.runtimes.set(record.portalId, runtime);
    await runtime.open();
    if (!current) this.logger.log(`serving portal ${record.portalId} (${record.domain})`);
  }

  /** Starts delivery of the portals this replica owns now and stops it for the ones it lost. */
  private async placeDelivery(): Promise<void> {
    const moves: Promise<void>[] = [];
    for (const runtime of this.runtimes.values()) {
      const owned = this.shards.owns(runtime.portalId);
      if (owned && !runtime.delivering) moves.push(runtime.startDelivery());
      else if (!owned && runtime.delivering) moves.push(runtime.stopDelivery());
    }
    await Promise.all(moves);
  }
}
