import { Logger } from '@nestjs/common';
import { DeliveryLease, LeaseStore } from '../store/coordination-store';

/** How often a replica chasing a lease it was just given asks again. */
const CHASE_MS = 200;

/**
 * Holds, renews and gives up one portal's delivery lease (docs/decisions/replicas.md).
 * Every replica runs one: the holder renews every third of the lease time; the others try as often, and
 * one of them takes the portal over once the holder's lease has expired (it died or lost the database).
 * The holder stops sending a little before its lease could expire, and every write of delivery is fenced
 * with the lease's epoch, so a replica that was merely slow cannot overwrite its successor's work.
 */
export class LeaseKeeper {
  private readonly logger: Logger;
  private lease?: DeliveryLease;
  private validUntil = 0;
  private timer?: NodeJS.Timeout;
  private ticking?: Promise<void>;
  /** kick() came while a try was under way: the answer it is waiting for may predate what it was told. */
  private kicked = false;
  private lastErrorLoggedAt = 0;
  private chaseUntil = 0;
  private chaseTimer?: NodeJS.Timeout;
  /** Liveness: false while this replica counts as dead to the others (its mark is lost), so it sends nothing. */
  private mayHold: () => boolean = () => true;

  constructor(
    private readonly store: LeaseStore,
    private readonly portalId: string,
    private readonly owner: string,
    private readonly ttlMs: number,
    /** Told when this replica starts delivering (it took or renewed the lease after holding none). */
    private readonly onAcquired: () => void,
    /**
     * For this long after `start`, a lease held by another is asked for again every CHASE_MS rather than at
     * the next tick: a replica the shard map just gave the portal to takes it as soon as the previous holder
     * lets go (a hand-over) or is seen dead. 0: off (every replica of one portal competes, as before).
     */
    private readonly chaseMs = 0,
  ) {
    this.logger = new Logger(`Delivery ${portalId}`);
  }

  start(): void {
    if (this.timer) return;
    this.chaseUntil = Date.now() + this.chaseMs;
    void this.tick();
    this.timer = setInterval(() => void this.tick(), Math.max(500, Math.floor(this.ttlMs / 3)));
  }

  /**
   * Renews or tries now rather than at the next tick: a replica that was just assigned the portal
   * (src/delivery/shard-map.ts) takes it at once. A try already under way is followed by one more.
   */
  kick(): void {
    if (!this.timer) return;
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
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.ticking;
    const lease = this.lease;
    this.lease = undefined;
    if (lease) await this.store.releaseLease(lease).catch(() => undefined);
  }

  private tick(): Promise<void> {
    this.ticking ??= this.renew().finally(() => {
      this.ticking = undefined;
      if (this.kicked) {
        this.kicked = false;
        if (this.timer) void this.tick();
      }
    });
    return this.ticking;
  }

  private async renew(): Promise<void> {
    const askedAt = Date.now();
    try {
      const lease = await this.store.acquireLease(this.portalId, this.owner, this.ttlMs);
      if (!this.timer) {
        // Stopped while asking: give back what was just taken.
        if (lease) await this.store.releaseLease(lease);
        return;
      }
      if (!lease) {
        if (this.lease)
          this.logger.warn(`delivery lease lost to another replica (epoch ${this.lease.epoch})`);
        this.lease = undefined;
        if (Date.now() < this.chaseUntil) {
          clearTimeout(this.chaseTimer);
          this.chaseTimer = setTimeout(() => this.kick(), CHASE_MS);
        }
        return;
      }
      const fresh = this.lease?.epoch !== lease.epoch;
      this.lease = lease;
      // Stop a little early: our clock and the database's may differ, and a batch takes time to write back.
      this.validUntil = askedAt + this.ttlMs - Math.max(1000, Math.floor(this.ttlMs / 5));
      if (fresh) {
        this.logger.log(
          `delivering for portal ${this.portalId} (lease epoch ${lease.epoch}, owner ${this.owner})`,
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
