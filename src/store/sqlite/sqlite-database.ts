import Database from 'better-sqlite3';
import { closeSync, fdatasync, mkdirSync, openSync } from 'node:fs';
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
  /** The WAL file, opened for `fdatasync` only (never written through), when the file is in WAL mode. */
  private walFd?: number;
  private readonly synchronousNormal?: Database.Statement;
  private readonly synchronousFull?: Database.Statement;
  /** The WAL sync running on libuv's pool, and the one that follows it for commits made meanwhile. */
  private syncRunning?: Promise<void>;
  private syncWaiting?: Promise<void>;

  constructor(path: string) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.connection = new Database(path);
    const mode = this.connection.pragma('journal_mode = WAL', { simple: true });
    this.connection.pragma('synchronous = FULL');
    this.connection.pragma('busy_timeout = 5000');
    this.migrate();
    if (mode === 'wal') {
      // The migrations' transactions have created the WAL; the connection keeps it for its whole life.
      this.walFd = openSync(`${this.connection.name}-wal`, 'r');
      this.synchronousNormal = this.connection.prepare('PRAGMA synchronous = NORMAL');
      this.synchronousFull = this.connection.prepare('PRAGMA synchronous = FULL');
    }
  }

  close(): void {
    if (this.connection.open) this.connection.close();
    const fd = this.walFd;
    this.walFd = undefined;
    if (fd === undefined) return;
    // A sync still running on the pool keeps its descriptor until it is done.
    if (this.syncRunning) void this.syncRunning.catch(() => undefined).finally(() => closeSync(fd));
    else closeSync(fd);
  }

  /**
   * Group commit without blocking the event loop on the disk: `work` runs in an IMMEDIATE transaction
   * committed with synchronous=NORMAL (its WAL frames are written, not yet synced), and the promise resolves
   * once `fdatasync` of the WAL, on libuv's thread pool, has put them on disk. The main thread serves other
   * requests meanwhile; commits made while one sync runs share the next. Every commit of the connection
   * appends to the same WAL, and a sync covers every byte written before it began, so a resolved promise
   * means the transaction is as durable as under synchronous=FULL (a checkpoint syncs the WAL before it
   * copies frames and the database after). Without a WAL (`:memory:`) it is a plain synchronous commit.
   * A failed sync rejects: the caller answers "not stored, retry" and the retry is a duplicate.
   */
  transactionSynced<T>(work: () => T): Promise<T> {
    if (this.walFd === undefined || !this.synchronousNormal || !this.synchronousFull) {
      return Promise.resolve(this.connection.transaction(work).immediate());
    }
    this.synchronousNormal.run();
    let result: T;
    try {
      result = this.connection.transaction(work).immediate();
    } finally {
      this.synchronousFull.run();
    }
    return this.syncWal().then(() => result);
  }

  /** At most one `fdatasync` in flight; a commit made while it runs waits for the next one, shared. */
  private syncWal(): Promise<void> {
    if (this.syncWaiting) return this.syncWaiting;
    if (!this.syncRunning) return (this.syncRunning = this.startSync());
    this.syncWaiting = this.syncRunning
      .catch(() => undefined)
      .then(() => {
        this.syncWaiting = undefined;
        return (this.syncRunning = this.startSync());
      });
    return this.syncWaiting;
  }

  private startSync(): Promise<void> {
    return new Promise((resolve, reject) => {
      const fd = this.walFd;
      if (fd === undefined) {
        // Closed meanwhile: a closed connection has checkpointed and synced its WAL.
        this.syncRunning = undefined;
        return resolve();
      }
      fdatasync(fd, (error) => {
        this.syncRunning = undefined;
        if (error) reject(error);
        else resolve();
      });
    });
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
