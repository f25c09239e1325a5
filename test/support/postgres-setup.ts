import { Client } from 'pg';
import { newRunId, runStartOf, TEST_POSTGRES_URL, TEST_SCHEMA_ROOT } from './test-database';

/** A run that started this long ago has ended, however it ended: its schemas are leftovers. */
const ABANDONED_AFTER_MS = 6 * 3_600_000;

/**
 * Jest global setup: names this run (every worker inherits TEST_RUN_ID, so its schemas carry it) and drops
 * what abandoned runs left. Runs at the same time (several checkouts on one machine) never touch each
 * other's schemas: each drops only its own, at its teardown (postgres-teardown.ts).
 */
export default async function startRun(): Promise<void> {
  process.env.TEST_RUN_ID = newRunId();
  await dropSchemas((name) => {
    const started = runStartOf(name);
    return started !== undefined && Date.now() - started > ABANDONED_AFTER_MS;
  });
}

/** Drops the test schemas `doomed` names; without PostgreSQL there is nothing to drop. */
export async function dropSchemas(doomed: (name: string) => boolean): Promise<void> {
  const client = new Client({ connectionString: TEST_POSTGRES_URL });
  try {
    await client.connect();
  } catch {
    return;
  }
  try {
    const { rows } = await client.query<{ name: string }>(
      `SELECT nspname AS name FROM pg_namespace WHERE nspname LIKE $1`,
      [`${TEST_SCHEMA_ROOT}%`],
    );
    for (const { name } of rows.filter((row) => doomed(row.name))) {
      await client.query(`DROP SCHEMA IF EXISTS ${client.escapeIdentifier(name)} CASCADE`);
    }
  } finally {
    await client.end();
  }
}
