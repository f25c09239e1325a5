import { Logger } from '@nestjs/common';
import { DeliveryLease, LeaseStore } from '../store/coordination-store';

/** How often a replica chasing a lease it was just given asks again. */
const CHASE_MS = 200;

/**
 * One process's renewal of every delivery lease it holds with one store as one owner: one timer and one
 * statement per tick (`LeaseStore.renewLeases`), whatever the number of portals. Each portal's LeaseKeeper
 * learns from it whether its lease was renewed or taken over; keepers holding none try for theirs at the
 * same tick, each with its own statement (acquisition stays per portal: takeover, chase).
 */
class SharedRenewal {
  private readonly keepers = new Set<LeaseKeeper>();
  private timer?: NodeJS.Timeout;
  /** The tick under way, if any: a keeper stopping waits for it before it releases its lease. */
  running?: Promise<void>;
  private lastErrorLoggedAt = 0;
  private readonly logger = new Logger('Delivery leases');

  private constructor(
    private readonly store: LeaseStore,
    private readonly owner: string,
    private readonly ttlMs: number,
    private readonly forget: () => void,
  ) {}

  private static readonly byStore = new WeakMap<LeaseStore, Map<string, SharedRenewal>>();

  /** The renewal of `owner`'s leases of `ttlMs` in `store`, made at the first keeper that joins it. */
  static of(store: LeaseStore, owner: string, ttlMs: number): SharedRenewal {
    let renewals = SharedRenewal.byStore.get(store);
    if (!renewals) SharedRenewal.byStore.set(store, (renewals = new Map()));
    const key = `${owner}\u001f${ttlMs}`;
    let renewal = renewals.get(key);
    if (!renewal) {
      const map = renewals;
      renewal = new SharedRenewal(store, owner, ttlMs, () => map.delete(key));
      renewals.set(key, renewal);
    }
    return renewal;
  }

  join(keeper: LeaseKeeper): void {
    this.keepers.add(keeper);
    this.timer ??= setInterval(() => void this.tick(), Math.max(500, Math.floor(this.ttlMs / 3)));
  }

  leave(keeper: LeaseKeeper): void {
    this.keepers.delete(keeper);
    if (this.keepers.size > 0) return;
    clearInterval(this.timer);
    this.timer = undefined;
    this.forget();
  }

  private tick(): Promise<void> {
    this.running ??= this.renew().finally(() => (this.running = undefined));
    return this.running;
  }

  private async renew(): Promise<void> {
    const askedAt = Date.now();
    const holders = [...this.keepers].flatMap((keeper) => {
      const lease = keeper.held();
      return lease ? [{ keeper, lease }] : [];
    });
    try {
      const renewed = await this.store.renewLeases(
        this.owner,
        holders.map(({ lease }) => lease),
        this.ttlMs,
      );
      const epochs = new Map(renewed.map((lease) => [lease.portalId, lease.epoch]));
      for (const { keeper, lease } of holders) keeper.renewed(lease, epochs.get(lease.portalId), askedAt);
    } catch (error) {
      // The leases stay usable until their validUntil; fenced writes protect the rest.
      if (Date.now() - this.lastErrorLoggedAt > 10_000) {
        this.lastErrorLoggedAt = Date.now();
        this.logger.warn(`cannot renew the delivery leases: ${(error as Error).message}`);
      }
    }
    // Portals whose lease this replica does not hold (or has just lost): each asks for its own.
    for (const keeper of this.keepers) if (!keeper.held()) keeper.kick();
  }
}

/** One portal's lease, held as one owner. */
export interface LeaseKeeperOptions {
  store: LeaseStore;
  portalId: string;
  owner: string;
  ttlMs: number;
  /** Told when this replica starts delivering (it took or renewed the lease after holding none). */
  onAcquired: () => void;
  /**
   * For this long after `start`, a lease held by another is asked for again every CHASE_MS rather than at
   * the next tick: a replica the shard map just gave the portal to takes it as soon as the previous holder
   * lets go (a hand-over) or is seen dead. 0 (the default): off (every replica of one portal competes).
   */
  chaseMs?: number;
}

/**
 * Holds, renews and gives up one portal's delivery lease (docs/decisions/replicas.md).
 * Every replica runs one: the holder's lease is renewed every third of the lease time, with every other
 * lease of its process, by one statement (`SharedRenewal`); the others try as often, and one of them takes
 * the portal over once the holder's lease has expired (it died or lost the database).
 * The holder stops sending a little before its lease could expire, and every write of delivery is fenced
 * with the lease's epoch, so a replica that was merely slow cannot overwrite its successor's work.
 */
export class LeaseKeeper {
  private readonly logger: Logger;
  private lease?: DeliveryLease;
  private validUntil = 0;
  private started = false;
  private ticking?: Promise<void>;
  /** kick() came while a try was under way: the answer it is waiting for may predate what it was told. */
  private kicked = false;
  private lastErrorLoggedAt = 0;
  private chaseUntil = 0;
  private chaseTimer?: NodeJS.Timeout;
  /** Liveness: false while this replica counts as dead to the others (its mark is lost), so it sends nothing. */
  private mayHold: () => boolean = () => true;
  private readonly renewal: SharedRenewal;
  private readonly store: LeaseStore;
  private readonly portalId: string;
  private readonly owner: string;
  private readonly ttlMs: number;
  private readonly onAcquired: () => void;
  private readonly chaseMs: number;

  constructor(options: LeaseKeeperOptions) {
    const { store, portalId, owner, ttlMs } = options;
    this.store = store;
    this.portalId = portalId;
    this.owner = owner;
    this.ttlMs = ttlMs;
    this.onAcquired = options.onAcquired;
    this.chaseMs = options.chaseMs ?? 0;
    this.logger = new Logger(`Delivery ${portalId}`);
    this.renewal = SharedRenewal.of(store, owner, ttlMs);
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.chaseUntil = Date.now() + this.chaseMs;
    this.renewal.join(this);
    void this.tick();
  }

  /**
   * Renews or tries now rather than at the next tick: a replica that was just assigned the portal
   * (src/delivery/shard-map.ts) takes it at once. A try already under way is followed by one more.
   */
  kick(): void {
    if (!this.started) return;
    if (this.ticking) this.kicked = true;
    else void this.tick();
  }

  /**
   * Asks for the lease now and then every CHASE_MS for `forMs`: another replica was seen dead, and the
   * store hands its lease over at once (docs/decisions/failover-and-limits.md).
   */
  chase(forMs: number): void {
    this.chaseUntil = Math.max(this.chaseUntil, Date.now() + forMs);
    this.kick();
  }

  /** Sends only while `predicate` says so (the replica holds its liveness mark), whatever the lease says. */
  holdOnlyWhile(predicate: () => boolean): void {
    this.mayHold = predicate;
  }

  /** The lease while this replica may send: valid and with time to spare before it could expire. */
  current(): DeliveryLease | undefined {
    return this.lease && Date.now() < this.validUntil && this.mayHold() ? this.lease : undefined;
  }

  /** A fenced write found the lease taken over: stop delivering until the lease is ours again. */
  lost(lease: DeliveryLease): void {
    if (this.lease?.epoch !== lease.epoch) return;
    this.logger.warn(`another replica took over delivery (our epoch ${lease.epoch} is stale)`);
    this.lease = undefined;
  }

  /** Gives the lease up (shutdown), so another replica takes over now rather than after it expires. */
  async stop(): Promise<void> {
    clearTimeout(this.chaseTimer);
    if (!this.started) return;
    this.started = false;
    this.renewal.leave(this);
    // A shared renewal under way may still extend this lease: the release must come after it.
    await Promise.all([this.ticking, this.renewal.running]);
    const lease = this.lease;
    this.lease = undefined;
    if (lease) await this.store.releaseLease(lease).catch(() => undefined);
  }

  /** The lease the shared renewal renews: the one this keeper holds, usable or not. */
  held(): DeliveryLease | undefined {
    return this.started ? this.lease : undefined;
  }

  /**
   * The shared renewal's answer for `lease` (asked at `askedAt`): renewed with `epoch`, or undefined when
   * the store no longer has it as ours. An answer about a lease this keeper has since replaced is ignored.
   */
  renewed(lease: DeliveryLease, epoch: number | undefined, askedAt: number): void {
    if (this.lease !== lease) return;
    if (epoch === lease.epoch) {
      this.validUntil = Math.max(this.validUntil, this.validFrom(askedAt));
      return;
    }
    this.logger.warn(`delivery lease lost to another replica (epoch ${lease.epoch})`);
    this.lease = undefined;
  }

  /** Stop a little early: our clock and the database's may differ, and a batch takes time to write back. */
  private validFrom(askedAt: number): number {
    return askedAt + this.ttlMs - Math.max(1000, Math.floor(this.ttlMs / 5));
  }

  private tick(): Promise<void> {
    this.ticking ??= this.acquire().finally(() => {
      this.ticking = undefined;
      if (this.kicked) {
        this.kicked = false;
        if (this.started) void this.tick();
      }
    });
    return this.ticking;
  }

  private async acquire(): Promise<void> {
    const askedAt = Date.now();
    try {
      const lease = await this.store.acquireLease(this.portalId, this.owner, this.ttlMs);
      if (!this.started) {
        // Stopped while asking: give back what was just taken.
        if (lease) await this.store.releaseLease(lease);
        return;
      }
      if (!lease) {
        if (this.lease) {
          this.logger.warn(`delivery lease lost to another replica (epoch ${this.lease.epoch})`);
        }
        this.lease = undefined;
        if (Date.now() < this.chaseUntil) {
          clearTimeout(this.chaseTimer);
          this.chaseTimer = setTimeout(() => this.kick(), CHASE_MS);
        }
        return;
      }
      const fresh = this.lease?.epoch !== lease.epoch;
      this.lease = lease;
      this.validUntil = this.validFrom(askedAt);
      if (fresh) {
        // What happened first, in words; the ids an operator compares across replicas last.
        this.logger.log(
          `delivering portal ${this.portalId}'s calls from this replica (lease epoch ${lease.epoch}, replica ${this.owner})`,
        );
        this.onAcquired();
      }
    } catch (error) {
      // The lease stays usable until validUntil; fenced writes protect the rest.
      if (Date.now() - this.lastErrorLoggedAt > 10_000) {
        this.lastErrorLoggedAt = Date.now();
        this.logger.warn(`cannot renew the delivery lease: ${(error as Error).message}`);
      }
    }
  }
}
