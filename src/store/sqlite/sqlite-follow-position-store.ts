import Database from 'better-sqlite3';
import { FollowPositionStore } from '../follow-position-store';
import { SqliteDatabase } from './sqlite-database';

/** Ledger positions in the bridge's SQLite file. */
export class SqliteFollowPositionStore extends FollowPositionStore {
  private readonly db: Database.Database;

  constructor(database: SqliteDatabase) {
    super();
    this.db = database.connection;
  }

  async get(portalId: string, source: string): Promise<string | undefined> {
    const row = this.db
      .prepare('SELECT position FROM follow_positions WHERE portal_id = ? AND source = ?')
      .get(portalId, source) as { position: string } | undefined;
    return Promise.resolve(row?.position);
  }

  async put(portalId: string, source: string, position: string, now: number): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO follow_positions (portal_id, source, position, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (portal_id, source) DO UPDATE SET position = excluded.position, updated_at = excluded.updated_at`,
      )
      .run(portalId, source, position, now);
    return Promise.resolve();
  }
}
