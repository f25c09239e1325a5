import Database from 'better-sqlite3';
import { closeSync, fdatasync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { SqlDialect, SqlRunner, SqlTransaction, Statement } from '../fence';
import { SQLITE_MIGRATIONS } from './sqlite-migrations';

/**
 * SQLite's side of the statements defined once for both engines. Its clock is the host's that holds the
 * single file, the same for every process on it; `julianday('now')` is fixed for the whole statement.
 */
export const SQLITE_DIALECT: SqlDialect = {
  nowMs: `CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)`,
  skipLocked: '',
  forUpdate: '',
  greatest: 'MAX',
  jsonText: (column, key) => `json_extract(${column}, '$.${key}')`,
  placeholder: () => '?',
};

/** WAL syncs in flight at once (libuv's pool has 4 threads, shared with the rest of the process). */
const MAX_SYNCS = 2;

/**
 * One SQLite file shared by the call store and the token store: opened once in WAL mode with
 * synchronous=FULL (a commit is on disk before its promise resolves) and migrated once.
 */
export class SqliteDatabase implements SqlRunner {
  readonly connection: Database.Database;
  readonly dialect = SQLITE_DIALECT;
  /** Statements of the concerns defined once for both engines, prepared once each. */
  private readonly prepared = new Map<string, Database.Statement>();
  /** The WAL file, opened for `fdatasync` only (never written through), when the file is in WAL mode. */
  private walFd?: number;
  private readonly synchronousNormal?: Database.Statement;
  private readonly synchronousFull?: Database.Statement;
  /** WAL syncs running on libuv's pool, and the one that starts when one of them ends. */
  private syncsRunning = 0;
  private syncWaiting?: { promise: Promise<void>; start: () => void };
  private walFdToClose?: number;

  constructor(path: string) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.connection = new Database(path);
    const mode = this.connection.pragma('journal_mode = WAL', { simple: true });
    this.connection.pragma('synchronous = FULL');
    this.connection.pragma('busy_timeout = 5000');
    this.migrate();
    if (mode === 'wal') {
      // The migrations' transactions have created the WAL; the connection keeps it for its whole life.
      // Without it (never seen), every commit syncs itself, as under synchronous=FULL.
      this.walFd = openWal(`${this.connection.name}-wal`);
      this.synchronousNormal = this.connection.prepare('PRAGMA synchronous = NORMAL');
      this.synchronousFull = this.connection.prepare('PRAGMA synchronous = FULL');
    }
  }

  /** Runs `statement` now (better-sqlite3 is synchronous): the rows it answers, none for a plain write. */
  async all<R>(statement: Statement): Promise<R[]> {
    return this.runNow<R>(statement);
  }

  /** better-sqlite3's transaction: the body runs through at once, each statement as it is yielded. */
  async atomically<T>(work: () => SqlTransaction<T>): Promise<T> {
    return this.connection.transaction(() => {
      const body = work();
      let step = body.next();
      while (!step.done) step = body.next(this.runNow(step.value));
      return step.value;
    })();
  }

  /** `all`, for a transaction's body, which must not wait. */
  runNow<R>(statement: Statement): R[] {
    let prepared = this.prepared.get(statement.text);
    if (!prepared) {
      prepared = this.connection.prepare(statement.text);
      this.prepared.set(statement.text, prepared);
    }
    if (!prepared.reader) {
      prepared.run(...statement.values);
      return [];
    }
    return prepared.all(...statement.values) as R[];
  }

  close(): void {
    if (this.connection.open) this.connection.close();
    const fd = this.walFd;
    this.walFd = undefined;
    if (fd === undefined) return;
    // A sync still running on the pool keeps its descriptor until it is done.
    if (this.syncsRunning > 0) this.walFdToClose = fd;
    else closeSync(fd);
  }

  /**
   * Group commit without blocking the event loop on the disk: `work` runs in an IMMEDIATE transaction
   * committed with synchronous=NORMAL (its WAL frames are written, not yet synced), and the promise resolves
   * once `fdatasync` of the WAL, on libuv's thread pool, has put them on disk. The main thread serves other
   * requests meanwhile; a commit made while MAX_SYNCS syncs run shares the next one. Every commit of the connection
   * appends to the same WAL, and a sync covers every byte written before it began, so a resolved promise
   * means the transaction is as durable as under synchronous=FULL (a checkpoint syncs the WAL before it
   * copies frames and the database after). Without a WAL (`:memory:`) it is a plain synchronous commit.
   * A transaction that fails throws, as `transaction()` does, with nothing stored. A failed sync rejects:
   * the caller answers "not stored, retry" and the retry is a duplicate.
   */
  transactionSynced<T>(work: () => T): Promise<T> {
    // Inside another transaction (a savepoint), the outer commit decides, and the level cannot change.
    if (
      this.walFd === undefined ||
      !this.synchronousNormal ||
      !this.synchronousFull ||
      this.connection.inTransaction
    ) {
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

  /**
   * Starts an `fdatasync` of the WAL now, or, with MAX_SYNCS already running, joins the one that starts
   * when the first of them ends. Either begins after the caller's commit, so it covers it; syncs running
   * side by side share the file system's journal commit, so a commit never waits for a whole sync that
   * began before it.
   */
  private syncWal(): Promise<void> {
    if (this.syncsRunning < MAX_SYNCS) return this.startSync();
    if (!this.syncWaiting) {
      let start: () => void = () => undefined;
      const promise = new Promise<void>((resolve, reject) => {
        start = () => void this.startSync().then(resolve, reject);
      });
      this.syncWaiting = { promise, start };
    }
    return this.syncWaiting.promise;
  }

  private startSync(): Promise<void> {
    this.syncsRunning += 1;
    return new Promise((resolve, reject) => {
      const done = (error: NodeJS.ErrnoException | null) => {
        this.syncsRunning -= 1;
        const next = this.syncWaiting;
        this.syncWaiting = undefined;
        next?.start();
        if (this.syncsRunning === 0 && this.walFdToClose !== undefined) {
          closeSync(this.walFdToClose);
          this.walFdToClose = undefined;
        }
        if (error) reject(error);
        else resolve();
      };
      // Closed meanwhile, the descriptor stays open until the last sync is done (`close`).
      const fd = this.walFd ?? this.walFdToClose;
      if (fd === undefined) done(null);
      else fdatasync(fd, done);
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

function openWal(path: string): number | undefined {
  try {
    return openSync(path, 'r');
  } catch {
    return undefined;
  }
}
