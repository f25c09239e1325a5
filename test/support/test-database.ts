import { basename, join } from 'node:path';

/**
 * Which store the behaviour tests run on: SQLite files by default, PostgreSQL when TEST_DATABASE=postgres
 * (the README's test command runs the suites both ways). Each test folder gets its own schema, so tests
 * never see each other's rows, and two bridges given the same folder share one database, as two
 * processes on one SQLite file do.
 */
export const TEST_POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export const onPostgres = process.env.TEST_DATABASE === 'postgres';

/** Test schemas share this prefix; the PostgreSQL run drops leftovers of earlier runs first. */
export const TEST_SCHEMA_PREFIX = 'bridge_test_';

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
