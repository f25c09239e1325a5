/**
 * What replicas sharing one database agree on (docs/decisions/replicas.md): who delivers a
 * portal's calls (a lease with a fencing epoch), and how much of the portal's request budget is left (one
 * shared leaky bucket). Both live in the database, so they survive any replica.
 */

import { Fence, fenceHolds } from './fence';

/** The right to deliver one portal's calls, until another replica takes it over with a higher epoch. */
export interface DeliveryLease {
  portalId: string;
  owner: string;
  /** Rises by one at every change of owner: a write fenced with an older epoch is refused. */
  epoch: number;
}

/** A write fenced with a lease that another replica has since taken over. Nothing of it was stored. */
export class LeaseLostError extends Error {
  constructor(readonly lease: DeliveryLease) {
    super(`the delivery lease of portal ${lease.portalId} (epoch ${lease.epoch}) was taken over`);
  }
}

/**
 * The check every write fenced with a delivery lease makes, in its own transaction, against the lease row
 * it read there (`holder`): throws LeaseLostError unless the lease is still `fence` (store/fence.ts).
 */
export function assertLeaseHeld(holder: Fence | undefined, fence: DeliveryLease): void {
  if (!fenceHolds(holder, fence)) throw new LeaseLostError(fence);
}

export abstract class LeaseStore {
  /**
   * Takes the portal's lease for `ttlMs` when it is free, expired or already `owner`'s (then it is
   * renewed, same epoch). On PostgreSQL also when its owner is a replica registered in the
   * `ReplicaRegistry` whose liveness mark is gone (it died): one epoch higher, as for an expired lease.
   * Returns the lease held, or undefined while another owner's lease runs.
   */
  abstract acquireLease(portalId: string, owner: string, ttlMs: number): Promise<DeliveryLease | undefined>;

  /**
   * Renews, in one statement, each of `held` that `owner` still holds with the same epoch, for `ttlMs` from
   * now (expired but not taken over yet counts as held, as in acquireLease). Returns the leases renewed: one
   * of `held` missing from the answer was taken over (or released). One process renews all its leases so,
   * once per tick (docs/decisions/replicas.md), instead of one statement per portal.
   */
  abstract renewLeases(
    owner: string,
    held: readonly DeliveryLease[],
    ttlMs: number,
  ): Promise<DeliveryLease[]>;

  /** Gives the lease up at once (shutdown), so another replica need not wait for it to expire. */
  abstract releaseLease(lease: DeliveryLease): Promise<void>;
}

/**
 * Which replicas are alive (docs/decisions/sharding.md): each replica holds a liveness mark while it
 * runs, and the mark goes the moment its process (or its connection to the database) does, so the others
 * can split the portals among the live ones and take a dead one's leases over at once.
 */
export abstract class ReplicaRegistry {
  /** Registers `replicaId` and takes its liveness mark; resolves once taken. */
  abstract join(replicaId: string): Promise<void>;

  /** The ids of the replicas alive now (this one included once joined), sorted. */
  abstract liveReplicas(): Promise<string[]>;

  /** Gives the mark up (shutdown): the others see this replica gone at their next look. */
  abstract leave(): Promise<void>;

  /**
   * Whether this replica holds its mark now: false before join, after leave, and while the mark is lost
   * (its connection dropped) until it is taken again.
   */
  abstract holdsMark(): boolean;

  /**
   * Calls `listener(false)` when the mark is lost without leave (its connection dropped) and
   * `listener(true)` when it is taken again. Returns a function that stops the listener.
   */
  abstract onMarkChange(listener: (held: boolean) => void): () => void;
}

/** The shared bucket after a change: its fill level and the drain factor (1, or less after 503s). */
export interface BucketState {
  level: number;
  factor: number;
}

/** How one replica asks the shared bucket for a unit. */
export interface BucketRequest {
  ratePerSec: number;
  /** The fill level a unit may bring the bucket to: background work stops short of the interactive reserve. */
  limit: number;
}

/**
 * The portal's leaky bucket, shared by every replica (PostgreSQL). A unit is taken in one atomic
 * statement; the level drains by the database's clock, so replicas' clocks do not matter.
 */
export abstract class SharedBucketStore {
  /** Takes one unit when it fits under `limit` (`waitMs` 0), or says how many ms to wait before asking again. */
  abstract take(portalId: string, request: BucketRequest): Promise<BucketState & { waitMs: number }>;

  /** Gives back a unit taken but not used. */
  abstract refund(portalId: string, ratePerSec: number): Promise<void>;

  /**
   * A request left late after its unit was granted: the portal counts it later than the bucket did, so
   * the level rises by `extra` (at most one unit; `lateSpend`) for every replica's next grant.
   */
  abstract spentLate(portalId: string, ratePerSec: number, extra: number): Promise<void>;

  /**
   * The portal answered 503: fill the bucket to `capacity` for every replica and halve the shared drain
   * factor (never below `minFactor`).
   */
  abstract rejected(portalId: string, ratePerSec: number, capacity: number, minFactor: number): Promise<void>;

  /** A request went through: the drain factor recovers by `step` up to 1. */
  abstract accepted(portalId: string, step: number): Promise<void>;
}
