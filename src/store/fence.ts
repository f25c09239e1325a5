/**
 * Fenced writes (docs/decisions/dialer-fencing.md). A claim on something shared by replicas (a portal's
 * delivery lease, a dial request) carries a fencing token: who took it and the epoch it got. The epoch rises
 * at every new claim, so a write that names an older token, made by a replica that paused past its claim,
 * changes nothing and tells its writer it lost. Both SQL engines build their fenced statements from the
 * definitions here, timed by the database's own clock (`SqlDialect.nowMs`), never a replica's.
 */

/** A claim's token: every write made under the claim names it. */
export interface Fence {
  owner: string;
  /** Rises by one at every new claim: a write naming an older epoch is refused. */
  epoch: number;
}

/** Whether the claim stored now (`holder`) is still `fence`: the one check every fenced write makes. */
export function fenceHolds(holder: Fence | undefined, fence: Fence): boolean {
  return holder !== undefined && holder.owner === fence.owner && holder.epoch === fence.epoch;
}

/** What differs between the engines in the statements defined once for both. */
export interface SqlDialect {
  /** The database's clock, ms since the epoch, as an SQL expression of integer value. */
  readonly nowMs: string;
  /** After a subquery that picks rows to claim or delete: skip rows another transaction holds. */
  readonly skipLocked: string;
  /** After a read whose rows its transaction goes on to change: lock them (SQLite's writes are serial). */
  readonly forUpdate: string;
  /** The scalar function answering the larger of its arguments (SQLite's MAX, PostgreSQL's GREATEST). */
  readonly greatest: string;
  /** A JSON object's text field (`key`, a plain name) of a text column holding JSON, as an SQL expression. */
  jsonText(column: string, key: string): string;
  /** The placeholder of the `index`-th parameter (1-based). */
  placeholder(index: number): string;
}

/** A statement and its parameters, in the dialect it was built for. */
export interface Statement {
  text: string;
  values: unknown[];
}

/**
 * The seam between a store concern defined once and the engine that runs it: the dialect its statements
 * are built in, and a run that answers the rows (those a RETURNING names; none for a plain write).
 */
export interface SqlRunner {
  readonly dialect: SqlDialect;
  all<R>(statement: Statement): Promise<R[]>;
  /** Runs the statements `work` yields in one transaction: committed when it returns, rolled back when one throws. */
  atomically<T>(work: () => SqlTransaction<T>): Promise<T>;
}

/**
 * A transaction's body, written once for both engines: it yields each statement and goes on with the rows
 * it answered (`const rows = yield* rowsOf<Row>(statement)`). SQLite runs it through without waiting, so
 * no other caller's statement lands inside the transaction; PostgreSQL runs it on one pooled connection.
 */
export type SqlTransaction<T> = Generator<Statement, T, unknown[]>;

/** Inside a `SqlTransaction`: runs `statement` there and answers its rows. */
export function* rowsOf<R>(statement: Statement): Generator<Statement, R[], unknown[]> {
  return (yield statement) as R[];
}

/** SQL a `sqlOf` template takes as it is, not as a parameter: a clock, a dialect's keyword, a table's name. */
export class RawSql {
  constructor(readonly text: string) {}
}

export function raw(text: string): RawSql {
  return new RawSql(text);
}

/** A tag of statements (`sqlOf`). */
export type SqlTag = (strings: TemplateStringsArray, ...values: unknown[]) => Statement;

/**
 * The tag of statements in `dialect`: each value interpolated is the next parameter, but `raw` SQL stays as
 * it is, and a function of the builder puts in place the SQL it writes (with its own parameters).
 */
export function sqlOf(dialect: SqlDialect): SqlTag {
  return (strings, ...values) => {
    const builder = new StatementBuilder(dialect);
    const parts = values.map((value) => {
      if (value instanceof RawSql) return value.text;
      return typeof value === 'function'
        ? (value as (q: StatementBuilder) => string)(builder)
        : builder.value(value);
    });
    return builder.build(strings.reduce((text, string, index) => text + parts[index - 1] + string));
  };
}

/** In a `sqlOf` template: the database's clock and the dialect's words (`SqlDialect`). */
export const NOW = (q: StatementBuilder): string => q.dialect.nowMs;
export const SKIP_LOCKED = (q: StatementBuilder): string => q.dialect.skipLocked;
export const FOR_UPDATE = (q: StatementBuilder): string => q.dialect.forUpdate;
export const GREATEST = (q: StatementBuilder): string => q.dialect.greatest;

/** Builds a statement: `value(x)` is a placeholder for the next parameter, in order of appearance. */
export class StatementBuilder {
  readonly values: unknown[] = [];

  constructor(readonly dialect: SqlDialect) {}

  value(value: unknown): string {
    this.values.push(value === undefined ? null : value);
    return this.dialect.placeholder(this.values.length);
  }

  get now(): string {
    return this.dialect.nowMs;
  }

  build(text: string): Statement {
    return { text, values: this.values };
  }
}

/** A row's claim columns: the owner and the epoch a fenced update names. */
export interface FencedRow {
  table: string;
  /** Column → value identifying the row. */
  key: Record<string, unknown>;
  ownerColumn: string;
  epochColumn: string;
}

/**
 * `UPDATE … SET … WHERE <key> AND <owner, epoch> = fence [AND state IN (…)]`: changes the row only while
 * the claim is still `fence` (and the row's `state` column in one of `states`). `set` maps columns to values; `setSql` to
 * SQL expressions written with the builder (e.g. the database clock plus a lease). Run it and count the
 * rows changed: none means the claim was lost (or the state had moved on), and nothing was written.
 */
export function fencedUpdate(
  dialect: SqlDialect,
  row: FencedRow,
  fence: Fence,
  change: {
    set?: Record<string, unknown>;
    setSql?: (builder: StatementBuilder) => Record<string, string>;
    states?: readonly string[];
  },
): Statement {
  const builder = new StatementBuilder(dialect);
  const sets = Object.entries(change.set ?? {}).map(
    ([column, value]) => `${column} = ${builder.value(value)}`,
  );
  for (const [column, sql] of Object.entries(change.setSql?.(builder) ?? {})) sets.push(`${column} = ${sql}`);
  const where = Object.entries(row.key).map(([column, value]) => `${column} = ${builder.value(value)}`);
  where.push(`${row.ownerColumn} = ${builder.value(fence.owner)}`);
  where.push(`${row.epochColumn} = ${builder.value(fence.epoch)}`);
  if (change.states?.length) {
    where.push(`state IN (${change.states.map((state) => builder.value(state)).join(', ')})`);
  }
  return builder.build(`UPDATE ${row.table} SET ${sets.join(', ')} WHERE ${where.join(' AND ')}`);
}
