import { Client, Pool, PoolClient, QueryResultRow, types } from 'pg';
import { raw, SqlDialect, SqlRunner, SqlTransaction, Statement } from '../fence';
import { POSTGRES_MIGRATIONS } from './postgres-migrations';

/** bigint columns hold ms epochs and epochs, far below 2^53: read them as numbers, not strings. */
const typeParsers = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === types.builtins.INT8
      ? (value: string) => Number(value)
      : types.getTypeParser(oid, format as 'text')) as typeof types.getTypeParser,
};

/** Key of the advisory lock that serialises migrations across replicas starting together. */
const MIGRATION_LOCK = 7_240_531_001;

/** The database clock in ms epoch: leases and the shared bucket use it, so replicas' clocks do not matter. */
export const DB_NOW_MS = `(extract(epoch from clock_timestamp()) * 1000)`;
/** `DB_NOW_MS` in a statement written once for both engines, where SQLite reads the host's clock instead. */
export const DB_CLOCK = raw(DB_NOW_MS);

/** PostgreSQL's side of the statements defined once for both engines: the database clock, SKIP LOCKED. */
export const POSTGRES_DIALECT: SqlDialect = {
  nowMs: `round${DB_NOW_MS}::bigint`,
  skipLocked: ' FOR UPDATE SKIP LOCKED',
  forUpdate: ' FOR UPDATE',
  greatest: 'GREATEST',
  jsonText: (column, key) => `(${column}::json ->> '${key}')`,
  placeholder: (index) => `$${index}`,
};

export interface TransactionOptions {
  /** `SET LOCAL synchronous_commit = on`: the commit is durable before it resolves, whatever the default. */
  synchronousCommit?: boolean;
}

/** NOTIFYs a transaction sends with its COMMIT (each distinct one once). */
export interface CommitNotices {
  notify(channel: string, payload: string): void;
}

/**
 * One connection pool shared by the call, token, lease and budget stores: created once and migrated
 * once. `DATABASE_URL` is a libpq-style URL; its `options=-c search_path=NAME` selects a schema, which is
 * created when it does not exist yet.
 */
export class PostgresDatabase implements SqlRunner {
  readonly pool: Pool;
  private ready?: Promise<void>;
  /** The schema this database's tables live in (set once migrated): replicas share it, tests each have one. */
  private schemaName = '';
  private readonly subscribers = new Map<string, Set<(payload: string, own: boolean) => void>>();
  /** The server process ids of this pool's connections: a NOTIFY sent by one of them is this process's own. */
  private readonly ownBackends = new Set<number>();
  private listening?: Promise<void>;
  private listenClient?: Client;
  private closing = false;

  constructor(
    private readonly url: string,
    maxConnections = 10,
  ) {
    this.pool = new Pool({
      connectionString: url,
      max: maxConnections,
      types: typeParsers,
      connectionTimeoutMillis: 5000,
      // A query stuck behind a lock longer than this fails (503 at intake, a retry in delivery).
      statement_timeout: 15000,
    });
    // An idle client losing its connection (database restart) must not take the process down.
    this.pool.on('error', () => undefined);
    const backend = (client: PoolClient) => (client as PoolClient & { processID?: number }).processID;
    this.pool.on('connect', (client) => void this.ownBackends.add(backend(client) ?? 0));
    this.pool.on('remove', (client) => void this.ownBackends.delete(backend(client) ?? 0));
  }

  /** Connects and applies pending migrations; every store call waits for it. */
  async open(): Promise<void> {
    this.ready ??= this.migrate();
    return this.ready;
  }

  /**
   * `name`: a statement run often (the grouped ones), prepared once per connection, so PostgreSQL parses
   * and plans it once instead of on every run.
   */
  async query<R extends QueryResultRow>(sql: string, params: unknown[] = [], name?: string): Promise<R[]> {
    await this.open();
    return (
      await this.pool.query<R>(name ? { name, text: sql, values: params } : { text: sql, values: params })
    ).rows;
  }

  /** The statements store concerns define once for both engines (`SqlRunner`). */
  readonly dialect = POSTGRES_DIALECT;

  all<R>(statement: Statement): Promise<R[]> {
    return this.query<R & QueryResultRow>(statement.text, statement.values);
  }

  /** `transaction`, each statement the body yields run on its connection in turn. */
  atomically<T>(work: () => SqlTransaction<T>): Promise<T> {
    return this.transaction(async (client) => {
      const body = work();
      let step = body.next();
      while (!step.done) step = body.next((await client.query(step.value.text, step.value.values)).rows);
      return step.value;
    });
  }

  /**
   * Runs `work` in one transaction on one connection: committed when it resolves, rolled back when it throws.
   * `synchronousCommit` sets `synchronous_commit = on` for the transaction whatever the server's or role's
   * default (a commit is then on disk before it is answered), sent with BEGIN in one simple query: one round
   * trip. What `work` passes to `atCommit.notify` is sent with COMMIT in one simple query too (a NOTIFY is
   * delivered only when its transaction commits, so this is where it belongs anyway); an error in either
   * rolls the transaction back like one in `work`.
   */
  async transaction<T>(
    work: (client: PoolClient, atCommit: CommitNotices) => Promise<T>,
    options: TransactionOptions = {},
  ): Promise<T> {
    await this.open();
    const client = await this.pool.connect();
    const notices = new Set<string>();
    const atCommit: CommitNotices = {
      notify: (channel, payload) =>
        void notices.add(`NOTIFY ${client.escapeIdentifier(channel)}, ${client.escapeLiteral(payload)}`),
    };
    try {
      // No parameters: pg sends these as one simple query, which PostgreSQL runs in order in one round trip.
      await client.query(options.synchronousCommit ? 'BEGIN; SET LOCAL synchronous_commit = on' : 'BEGIN');
      const result = await work(client, atCommit);
      await client.query([...notices, 'COMMIT'].join('; '));
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  get schema(): string {
    return this.schemaName;
  }

  /**
   * Calls `handler` with the payload of every NOTIFY on `channel`, through one dedicated connection (a
   * pooled one cannot stay listening). A dropped connection is opened again a second later; what was
   * notified meanwhile is missed, which costs only latency, since delivery also looks at the queue itself.
   * `own`: one of this pool's connections sent it. Returns a function that stops the handler.
   */
  listen(channel: string, handler: (payload: string, own: boolean) => void): () => void {
    let handlers = this.subscribers.get(channel);
    if (!handlers) {
      handlers = new Set();
      this.subscribers.set(channel, handlers);
      // Already connected: listen on the new channel now (a reconnect listens on every channel).
      this.listenClient
        ?.query(`LISTEN ${this.listenClient.escapeIdentifier(channel)}`)
        .catch(() => undefined);
    }
    handlers.add(handler);
    this.listening ??= this.keepListening();
    return () => handlers.delete(handler);
  }

  /**
   * A connection of its own, outside the pool, for a session that must stay open for the process's life
   * (the replica's liveness lock). TCP keepalive on, so a peer that vanished is noticed even while idle.
   */
  dedicatedClient(): Client {
    return new Client({
      connectionString: this.url,
      connectionTimeoutMillis: 5000,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      types: typeParsers,
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.listenClient?.end().catch(() => undefined);
    await this.listening;
    await this.pool.end();
  }

  private async keepListening(): Promise<void> {
    while (!this.closing) {
      const client = new Client({ connectionString: this.url, connectionTimeoutMillis: 5000 });
      const lost = new Promise<void>((resolve) => {
        client.on('error', () => resolve());
        client.on('end', () => resolve());
      });
      client.on('notification', ({ channel, payload, processId }) => {
        const own = this.ownBackends.has(processId);
        for (const handler of this.subscribers.get(channel) ?? []) handler(payload ?? '', own);
      });
      try {
        await client.connect();
        this.listenClient = client;
        for (const channel of this.subscribers.keys()) {
          await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
        }
        if (!this.closing) await lost;
      } catch {
        // Unreachable database: try again below; the pool's own queries report the outage.
      }
      this.listenClient = undefined;
      await client.end().catch(() => undefined);
      if (!this.closing) await new Promise((resolve) => setTimeout(resolve, 1000).unref());
    }
  }

  /** Under a session advisory lock, so replicas starting together take turns and the later ones skip. */
  private async migrate(): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
      try {
        await this.ensureSchema(client);
        const current = await client.query<{ schema: string }>('SELECT current_schema() AS schema');
        this.schemaName = current.rows[0].schema;
        await client.query(
          'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, applied_at bigint)',
        );
        const applied = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
        const done = new Set(applied.rows.map((row) => row.version));
        for (const [index, sql] of POSTGRES_MIGRATIONS.entries()) {
          if (done.has(index + 1)) continue;
          await client.query('BEGIN');
          try {
            await client.query(sql);
            await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [
              index + 1,
              Date.now(),
            ]);
            await client.query('COMMIT');
          } catch (error) {
            await client.query('ROLLBACK').catch(() => undefined);
            throw error;
          }
        }
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
      }
    } catch (error) {
      this.ready = undefined;
      throw error;
    } finally {
      client.release();
    }
  }

  /** A search_path naming a schema that does not exist yet: create it. */
  private async ensureSchema(client: PoolClient): Promise<void> {
    const current = await client.query<{ schema: string | null }>('SELECT current_schema() AS schema');
    if (current.rows[0].schema) return;
    const path = await client.query<{ path: string }>("SELECT current_setting('search_path') AS path");
    const first = path.rows[0].path.split(',')[0].trim().replace(/^"|"$/g, '');
    if (!first || first === '$user') throw new Error('DATABASE_URL: search_path names no schema to use');
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${client.escapeIdentifier(first)}`);
  }
}
