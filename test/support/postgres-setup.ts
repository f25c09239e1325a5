import { Client } from 'pg';
import { onPostgres, TEST_POSTGRES_URL, TEST_SCHEMA_PREFIX } from './test-database';

/** Jest global setup: on the PostgreSQL run, drop the schemas earlier runs left behind. */
export default async function dropTestSchemas(): Promise<void> {
  if (!onPostgres) return;
  const client = new Client({ connectionString: TEST_POSTGRES_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>(
      `SELECT nspname AS name FROM pg_namespace WHERE nspname LIKE $1`,
      [`${TEST_SCHEMA_PREFIX}%`],
    );
    for (const { name } of rows) await client.query(`DROP SCHEMA ${client.escapeIdentifier(name)} CASCADE`);
  } finally {
    await client.end();
  }
}
