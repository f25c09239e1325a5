import { FollowPositionStore } from '../follow-position-store';
import { PostgresDatabase } from './postgres-database';

/** Ledger positions in PostgreSQL, shared by the replicas (the one holding the delivery lease writes). */
export class PostgresFollowPositionStore extends FollowPositionStore {
  constructor(private readonly db: PostgresDatabase) {
    super();
  }

  async get(portalId: string, source: string): Promise<string | undefined> {
    const [row] = await this.db.query<{ position: string }>(
      'SELECT position FROM follow_positions WHERE portal_id = $1 AND source = $2',
      [portalId, source],
    );
    return row?.position;
  }

  async put(portalId: string, source: string, position: string, now: number): Promise<void> {
    await this.db.query(
      `INSERT INTO follow_positions (portal_id, source, position, updated_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (portal_id, source) DO UPDATE SET position = excluded.position, updated_at = excluded.updated_at`,
      [portalId, source, position, now],
    );
  }
}
