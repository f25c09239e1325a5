import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { SqlDialect } from '../fence';
import { SQLITE_MIGRATIONS } from './sqlite-migrations';

/**
 * SQLite's side of the statements defined once for both engines. Its clock is the host's that holds the
 * single file, the same for every process on it; `julianday('now')` is fixed for the whole statement.
 */
export const SQLITE_DIALECT: SqlDialect = {
  nowMs: `CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)`,
  skipLocked: '',
  placeholder: () => '?',
};

/**
 * One SQLite file shared by the call store and the token store: opened once in WAL mode with
 * synchronous=FULL (a commit is on disk before its promise resolves) and migrated once.
 */
export class SqliteDatabase {
  readonly connection: Database.Database;

  constructor(path: string) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.connection = new Database(path);
    this.connection.pragma('journal_mode = WAL');
    this.connection.pragma('synchronous = FULL');
    this.connection.pragma('busy_timeout = 5000');
    this.migrate();
  }

  close(): void {
    if (this.connection.open) this.connection.close();
  }

  /**
   * Each entry in its own IMMEDIATE transaction that re-reads the version: two processes opening a fresh
   * file at once take turns, and the second skips what the first applied.
   */
  private migrate(): void {
    const db = this.connection;
    db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER)');
    const currentVersion = db.prepare('SELECT COALESCE(MAX(version), 0) AS version FROM schema_migrations');
    const record = db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)');
    SQLITE_MIGRATIONS.forEach((sql, index) => {
      const version = index + 1;
      db.transaction(() => {
        if (version <= (currentVersion.get() as { version: number }).version) return;
        db.exec(sql);
        record.run(version, Date.now());
      }).immediate();
    });
  }
}
