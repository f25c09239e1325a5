import { sql, SqlRunner } from './fence';

/**
 * Where a follower's reader keeps its durable position in a PBX's ledger (the CDR table of the API contract (docs/API.md)), so
 * a restart, a kill -9 or a takeover by another replica goes on from there. One opaque text per portal and
 * source; written after the calls read up to it are stored.
 */
export abstract class FollowPositionStore {
  abstract get(portalId: string, source: string): Promise<string | undefined>;
  abstract put(portalId: string, source: string, position: string, now: number): Promise<void>;
}

/** Ledger positions in either engine's database (on PostgreSQL shared by the replicas; the lease holder writes). */
export class SqlFollowPositionStore extends FollowPositionStore {
  constructor(private readonly db: SqlRunner) {
    super();
  }

  async get(portalId: string, source: string): Promise<string | undefined> {
    const [row] = await this.db.all<{ position: string }>(
      sql(
        this.db.dialect,
        (q) =>
          `SELECT position FROM follow_positions WHERE portal_id = ${q.value(portalId)} AND source = ${q.value(source)}`,
      ),
    );
    return row?.position;
  }

  async put(portalId: string, source: string, position: string, now: number): Promise<void> {
    await this.db.all(
      sql(
        this.db.dialect,
        (q) =>
          `INSERT INTO follow_positions (portal_id, source, position, updated_at)
           VALUES (${q.value(portalId)}, ${q.value(source)}, ${q.value(position)}, ${q.value(now)})
           ON CONFLICT (portal_id, source) DO UPDATE SET position = excluded.position, updated_at = excluded.updated_at`,
      ),
    );
  }
}
