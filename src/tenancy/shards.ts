/**
 * Which portals this replica delivers (docs/decisions/sharding.md). `ShardMap` (PostgreSQL: replicas
 * known alive by their advisory locks) spreads them over the live replicas; one process alone (SQLite)
 * delivers every portal.
 */
export interface Shards {
  start(): Promise<void>;
  stop(): Promise<void>;
  owns(portalId: string): boolean;
  /** The portal list changed here: assign again now. */
  refreshPortals(): Promise<void>;
  /** Told the portals this replica gained and lost after each change of the assignment. */
  onChange(listener: (gained: string[], lost: string[]) => void): () => void;
}
