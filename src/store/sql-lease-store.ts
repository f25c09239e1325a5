import { DeliveryLease, LeaseStore } from './coordination-store';
import { raw, RawSql, sqlOf, SqlRunner, SqlTag, StatementBuilder } from './fence';

/** What differs between the engines' delivery leases. */
export interface LeaseEngine {
  /**
   * The time leases are timed by, read at each statement: the database's clock (PostgreSQL, shared by
   * replicas on several machines) or the host's in ms (SQLite, the same for every process on the file).
   */
  clock(): RawSql | number;
  /** A SELECT answering the (portal_id, epoch) pairs of `held`, one row each. */
  pairs(held: readonly DeliveryLease[]): (q: StatementBuilder) => string;
  /** A condition on `portal_leases` under which another owner's unexpired lease may be taken over too. */
  takeOver?: string;
}

/** Delivery leases in either engine's database: a new owner takes a lease one epoch higher. */
export class SqlLeaseStore extends LeaseStore {
  private readonly sql: SqlTag;

  constructor(
    private readonly db: SqlRunner,
    private readonly engine: LeaseEngine,
  ) {
    super();
    this.sql = sqlOf(db.dialect);
  }

  async acquireLease(portalId: string, owner: string, ttlMs: number): Promise<DeliveryLease | undefined> {
    const now = this.engine.clock();
    const takeOver = raw(this.engine.takeOver ? ` OR ${this.engine.takeOver}` : '');
    // The same owner renews its epoch; anyone else may take an expired lease, one epoch higher.
    const [row] = await this.db.all<{ owner: string; epoch: number }>(
      this.sql`INSERT INTO portal_leases (portal_id, owner, epoch, expires_at)
       VALUES (${portalId}, ${owner}, 1, ${now} + ${ttlMs})
       ON CONFLICT (portal_id) DO UPDATE SET
         epoch = CASE WHEN portal_leases.owner = excluded.owner THEN portal_leases.epoch ELSE portal_leases.epoch + 1 END,
         owner = excluded.owner, expires_at = excluded.expires_at
       WHERE portal_leases.owner = excluded.owner OR portal_leases.expires_at <= ${now}${takeOver}
       RETURNING owner, epoch`,
    );
    return row && { portalId, owner: row.owner, epoch: Number(row.epoch) };
  }

  async renewLeases(owner: string, held: readonly DeliveryLease[], ttlMs: number): Promise<DeliveryLease[]> {
    if (held.length === 0) return [];
    const now = this.engine.clock();
    const rows = await this.db.all<{ portal_id: string; epoch: number }>(
      this.sql`UPDATE portal_leases SET expires_at = ${now} + ${ttlMs}
       WHERE owner = ${owner} AND (portal_id, epoch) IN (${this.engine.pairs(held)})
       RETURNING portal_id, epoch`,
    );
    return rows.map((row) => ({ portalId: row.portal_id, owner, epoch: Number(row.epoch) }));
  }

  async releaseLease(lease: DeliveryLease): Promise<void> {
    await this.db.all(
      this.sql`UPDATE portal_leases SET expires_at = 0
       WHERE portal_id = ${lease.portalId} AND owner = ${lease.owner} AND epoch = ${lease.epoch}`,
    );
  }
}
