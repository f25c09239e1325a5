import Database from 'better-sqlite3';
import { DeliveryLease, LeaseStore } from '../coordination-store';
import { SqliteDatabase } from './sqlite-database';

/** Delivery leases in the SQLite file: several processes on one file still deliver each portal once. */
export class SqliteLeaseStore extends LeaseStore {
  private readonly acquire: Database.Statement;
  private readonly release: Database.Statement;
  private readonly renew: Database.Statement;

  /** `now`: the host's clock, the same for every process on the file (specs hand in their own). */
  constructor(
    database: SqliteDatabase,
    private readonly now: () => number = Date.now,
  ) {
    super();
    const db = database.connection;
    // The same owner renews its epoch; anyone else may take an expired lease, one epoch higher.
    this.acquire = db.prepare(
      `INSERT INTO portal_leases (portal_id, owner, epoch, expires_at) VALUES (@portalId, @owner, 1, @until)
       ON CONFLICT (portal_id) DO UPDATE SET
         epoch = CASE WHEN portal_leases.owner = excluded.owner THEN portal_leases.epoch ELSE portal_leases.epoch + 1 END,
         owner = excluded.owner, expires_at = excluded.expires_at
       WHERE portal_leases.owner = excluded.owner OR portal_leases.expires_at <= @now
       RETURNING owner, epoch`,
    );
    this.renew = db.prepare(
      `UPDATE portal_leases SET expires_at = @until
       WHERE owner = @owner AND (portal_id, epoch) IN
         (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(@held))
       RETURNING portal_id, epoch`,
    );
    this.release = db.prepare(
      'UPDATE portal_leases SET expires_at = 0 WHERE portal_id = ? AND owner = ? AND epoch = ?',
    );
  }

  async acquireLease(portalId: string, owner: string, ttlMs: number): Promise<DeliveryLease | undefined> {
    const now = this.now();
    const row = this.acquire.get({ portalId, owner, now, until: now + ttlMs }) as
      { owner: string; epoch: number } | undefined;
    return row && { portalId, owner: row.owner, epoch: row.epoch };
  }

  async renewLeases(owner: string, held: readonly DeliveryLease[], ttlMs: number): Promise<DeliveryLease[]> {
    if (held.length === 0) return [];
    const rows = this.renew.all({
      owner,
      until: this.now() + ttlMs,
      held: JSON.stringify(held.map((lease) => [lease.portalId, lease.epoch])),
    }) as { portal_id: string; epoch: number }[];
    return rows.map((row) => ({ portalId: row.portal_id, owner, epoch: row.epoch }));
  }

  async releaseLease(lease: DeliveryLease): Promise<void> {
    this.release.run(lease.portalId, lease.owner, lease.epoch);
  }
}
