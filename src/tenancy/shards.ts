/**
 * Which portals this replica delivers (docs/ARCHITECTURE.md "Sharding"). `ShardMap` (PostgreSQL: replicas
 * known alive by their advisory locks) spreads them over the live replicas; one process alone (SQLite)
 * delivers every portal.
 */
export interface Shards {
  start(): Promise<void>;
  stop(): Promise<void>;
  owns(portalId: string): boolean;
  /** Told the portals this replica gained and lost after each change of the assignment. */
  onChange(listener: (gained: string[], lost: string[]) => void): () => void;
}

/** One process delivers every portal. */
export class AllPortalsHere implements Shards {
  start(): Promise<void> {
    return Promise.resolve();
  }

  stop(): Promise<void> {
    return Promise.resolve();
  }

  owns(): boolean {
    return true;
  }

  onChange(): () => void {
    return () => undefined;
  }
}
