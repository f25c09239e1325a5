import { ShardMap } from '../delivery/shard-map';
import { ReplicaRegistry } from '../store/coordination-store';
import { PortalRuntimes } from './portal-runtimes';
import { Shards } from './shards';

/**
 * Shard placement: which of the served portals this replica delivers. The shard map spreads the store's
 * active portals (the same list on every replica, whether or not a portal's runtime could be built here)
 * over the live replicas; each runtime's delivery is started or stopped to match.
 */
export class DeliveryPlacement {
  private readonly shards: Shards;
  private active: string[] = [];

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

  stop(): Promise<void> {
    return this.shards.stop();
  }

  /** The store's active portals changed (or may have): assign again, then place. */
  async portalsAre(active: string[]): Promise<void> {
    this.active = [...active].sort();
    await this.shards.refreshPortals();
    await this.place();
  }

  /** Starts delivery of the portals this replica owns now and stops it for the ones it lost. */
  async place(): Promise<void> {
    const moves: Promise<void>[] = [];
    for (const runtime of this.runtimes.all()) {
      const owned = this.shards.owns(runtime.portalId);
      if (owned && !runtime.delivering) moves.push(runtime.startDelivery());
      else if (!owned && runtime.delivering) moves.push(runtime.stopDelivery());
    }
    await Promise.all(moves);
  }
}
