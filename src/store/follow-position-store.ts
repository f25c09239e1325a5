import { sqlOf, SqlRunner } from './fence';

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
      sqlOf(this.db.dialect)`SELECT position FROM follow_positions
         WHERE portal_id = ${portalId} AND source = ${source}`,
    );
    return row?.position;
  }

  async put(portalId: string, source: string, position: string, now: number): Promise<void> {
    await this.db.all(
      sqlOf(this.db.dialect)`INSERT INTO follow_positions (portal_id, source, position, updated_at)
           VALUES (${portalId}, ${source}, ${position}, ${now})
           ON CONFLICT (portal_id, source) DO UPDATE SET position = excluded.position, updated_at = excluded.updated_at`,
    );
  }
}
