import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { Client } from 'pg';

/**
 * Which store the behaviour tests run on: SQLite files by default, PostgreSQL when TEST_DATABASE=postgres
 * (the README's test command runs the suites both ways). Each test folder gets its own schema, so tests
 * never see each other's rows, and two bridges given the same folder share one database, as two
 * processes on one SQLite file do.
 */
export const TEST_POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export const onPostgres = process.env.TEST_DATABASE === 'postgres';

/** Every test schema starts so; `TEST_SCHEMA_PREFIX` adds the run, so runs at once never drop each other's. */
export const TEST_SCHEMA_ROOT = 'bridge_test_';

/**
 * This run's id: set by the global setup (test/support/postgres-setup.ts) for every worker, its start time in
 * base 36 first so a later run can tell an abandoned run's schemas by age. A process outside jest makes its own.
 */
export const TEST_RUN_ID = (process.env.TEST_RUN_ID ??= newRunId());

/** This run's schemas share this prefix; the global teardown drops them. */
export const TEST_SCHEMA_PREFIX = `${TEST_SCHEMA_ROOT}${TEST_RUN_ID}_`;

export function newRunId(now = Date.now()): string {
  const started = Math.floor(now / 1000).toString(36);
  return (
    started +
    Math.floor(Math.random() * 36 ** 2)
      .toString(36)
      .padStart(2, '0')
  );
}

/** When the run of a schema named `bridge_test_<run>_…` started (ms), or undefined for another name. */
export function runStartOf(schema: string): number | undefined {
  const run = /^bridge_test_([0-9a-z]{8})_/.exec(schema)?.[1];
  return run === undefined ? undefined : parseInt(run.slice(0, 6), 36) * 1000;
}

export function testDatabaseUrl(dir: string, file = 'bridge.sqlite'): string {
  if (!onPostgres) return `sqlite:${join(dir, file)}`;
  return postgresUrlForSchema(schemaFor(dir, file));
}

export function postgresUrlForSchema(schema: string): string {
  // A URL may carry parameters already (`?host=/var/run/postgresql`: the server's Unix socket).
  const joiner = TEST_POSTGRES_URL.includes('?') ? '&' : '?';
  return `${TEST_POSTGRES_URL}${joiner}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
}

function schemaFor(dir: string, file: string): string {
  const name = `${basename(dir)}_${file.replace(/\.sqlite$/, '')}`;
  return (TEST_SCHEMA_PREFIX + name.toLowerCase().replace(/[^a-z0-9_]/g, '_')).slice(0, 63);
}

/**
 * The stores of each engine on a database of its own, for specs run against both (test/store/conformance):
 * SQLite on a file in a fresh temporary folder, PostgreSQL on a fresh `bridge_test_…` schema that `drop`
 * removes. `open` may be called again for a second process on the same database (a replica).
 */
export interface TestEngine {
  name: 'sqlite' | 'postgres';
  /** Settings for `openStores` on this engine's database (fresh per `TestEngine` instance). */
  settings(): { databaseUrl: string; poolSize: number };
  /** Removes the database (the folder, or the schema). */
  drop(): Promise<void>;
}

let engineCount = 0;

export function sqliteTestEngine(): TestEngine {
  const dir = mkdtempSync(join(tmpdir(), 'bridge-store-'));
  return {
    name: 'sqlite',
    settings: () => ({ databaseUrl: `sqlite:${join(dir, 'bridge.sqlite')}`, poolSize: 4 }),
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

export function postgresTestEngine(): TestEngine {
  engineCount += 1;
  const schema = `${TEST_SCHEMA_PREFIX}store_${process.pid}_${engineCount}_${Date.now().toString(36)}`;
  return {
    name: 'postgres',
    settings: () => ({ databaseUrl: postgresUrlForSchema(schema), poolSize: 4 }),
    drop: async () => {
      const client = new Client({ connectionString: TEST_POSTGRES_URL });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}

/** Both engines, for `describe.each(TEST_ENGINES)`. */
export const TEST_ENGINES: [string, () => TestEngine][] = [
  ['sqlite', sqliteTestEngine],
  ['postgres', postgresTestEngine],
];
