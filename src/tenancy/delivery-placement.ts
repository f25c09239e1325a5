import { ShardMap } from '../delivery/shard-map';
import { ReplicaRegistry } from '../store/coordination-store';
import { PortalRuntimes } from './portal-runtimes';
import { Shards } from './shards';

/** Newly owned portals built at once, at most. */
const WARM_CONCURRENCY = 8;

/**
 * Shard placement: which of the served portals this replica delivers. The shard map spreads the store's
 * active portals (the same list on every replica, whether or not a portal's runtime could be built here)
 * over the live replicas; each runtime's delivery is started or stopped to match.
 */
export class DeliveryPlacement {
  private readonly shards: Shards;
  private active: string[] = [];
  private readonly warmQueue: string[] = [];
  private readonly warmRuns = new Set<Promise<unknown>>();
  /** The portals this replica owned at the last placement (each built once when it became this replica's). */
  private readonly placed = new Set<string>();

  constructor(
    replicas: ReplicaRegistry,
    replicaId: string,
    private readonly runtimes: PortalRuntimes,
  ) {
    // The replica id is the lease owner too: a survivor takes a dead replica's leases at once (its lock is gone).
    this.shards = new ShardMap(replicas, replicaId, () => Promise.resolve(this.active));
  }

  async start(): Promise<void> {
    await this.shards.start();
    this.shards.onChange(() => void this.place());
  }

  /** No more builds of newly owned portals; those under way end. */
  async stopWarming(): Promise<void> {
    this.warmQueue.length = 0;
    this.placed.clear();
    await Promise.all([...this.warmRuns]);
  }

  async stop(): Promise<void> {
    await this.stopWarming();
    return this.shards.stop();
  }

  /** Builds newly owned portals a few at a time in the background (ten thousand at a start, not at once). */
  private warm(portalId: string): void {
    this.warmQueue.push(portalId);
    this.pumpWarming();
  }

  private pumpWarming(): void {
    while (this.warmRuns.size < WARM_CONCURRENCY && this.warmQueue.length > 0) {
      const id = this.warmQueue.shift() as string;
      const run: Promise<unknown> = (this.placed.has(id) ? this.runtimes.use(id) : Promise.resolve())
        .catch(() => undefined)
        .finally(() => {
          this.warmRuns.delete(run);
          this.pumpWarming();
        });
      this.warmRuns.add(run);
    }
  }

  /** The store's active portals changed (or may have): assign again, then place. */
  async portalsAre(active: string[]): Promise<void> {
    this.active = [...active].sort();
    await this.shards.refreshPortals();
    await this.place();
  }

  /** Whether the shard map gives this replica the portal now. */
  owns(portalId: string): boolean {
    return this.shards.owns(portalId);
  }

  /**
   * Starts delivery of the portals this replica owns now and stops it for the ones it lost. A portal that
   * became this replica's (at start, a takeover) is built once on that, whether or not it has work: its
   * queue is looked at, its events are bound, and the lease is held; idle, it is dropped later.
   */
  async place(): Promise<void> {
    const moves: Promise<unknown>[] = [];
    const owned = new Set<string>();
    for (const portalId of this.runtimes.servedIds()) {
      if (!this.shards.owns(portalId)) continue;
      owned.add(portalId);
      if (this.placed.has(portalId)) continue;
      this.placed.add(portalId);
      // A built one starts delivering below; an idle one is built, which starts it.
      if (this.runtimes.get(portalId)?.touch() === undefined) this.warm(portalId);
    }
    for (const portalId of this.placed) if (!owned.has(portalId)) this.placed.delete(portalId);
    for (const runtime of this.runtimes.all()) {
      const mine = owned.has(runtime.portalId);
      if (mine && !runtime.delivering) moves.push(runtime.startDelivery());
      else if (!mine && runtime.delivering) moves.push(runtime.stopDelivery());
    }
    await Promise.all(moves);
  }
}
