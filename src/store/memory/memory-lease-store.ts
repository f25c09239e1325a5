import { DeliveryLease, LeaseStore } from '../coordination-store';

/**
 * Delivery leases in memory, with the SQLite store's rules (renew your own keeping its epoch, take a free
 * or expired one with epoch + 1, release only your own epoch), for unit specs of the delivery loop. Not for production:
 * nothing survives the process.
 */
export class MemoryLeaseStore extends LeaseStore {
  private readonly leases = new Map<string, { owner: string; epoch: number; expiresAt: number }>();

  constructor(private readonly now: () => number = Date.now) {
    super();
  }

  async acquireLease(portalId: string, owner: string, ttlMs: number): Promise<DeliveryLease | undefined> {
    const now = this.now();
    const held = this.leases.get(portalId);
    if (held && held.owner !== owner && held.expiresAt > now) return undefined;
    // The same owner keeps its epoch (even after expiry, as in SQL); a new owner gets the next one.
    const epoch = held?.owner === owner ? held.epoch : (held?.epoch ?? 0) + 1;
    this.leases.set(portalId, { owner, epoch, expiresAt: now + ttlMs });
    return { portalId, owner, epoch };
  }

  async renewLeases(owner: string, held: readonly DeliveryLease[], ttlMs: number): Promise<DeliveryLease[]> {
    const renewed: DeliveryLease[] = [];
    for (const lease of held) {
      const row = this.leases.get(lease.portalId);
      if (row?.owner !== owner || row.epoch !== lease.epoch) continue;
      row.expiresAt = this.now() + ttlMs;
      renewed.push({ portalId: lease.portalId, owner, epoch: row.epoch });
    }
    return renewed;
  }

  async releaseLease(lease: DeliveryLease): Promise<void> {
    const held = this.leases.get(lease.portalId);
    if (held?.owner === lease.owner && held.epoch === lease.epoch) held.expiresAt = 0;
  }

  /** Who holds the portal's lease now (owner and epoch), as a fenced write checks it. */
  holder(portalId: string): { owner: string; epoch: number } | undefined {
    const held = this.leases.get(portalId);
    return held && { owner: held.owner, epoch: held.epoch };
  }
}
