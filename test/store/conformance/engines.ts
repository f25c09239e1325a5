import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Client } from 'pg';
import { openStores, Stores } from '../../../src/store/store.module';
import { TEST_POSTGRES_URL, TestEngine } from '../../support/test-database';

/** The stores of `engine`'s database, as the bridge opens them (migrated on open). */
export function openEngine(engine: TestEngine): Promise<Stores> {
  return openStores({
    ...engine.settings(),
    retentionMs: 1,
    retentionDays: 1,
    portalRetentionMs: 86_400_000,
  });
}

/** Opens the stores once for each test and closes them and drops the database after it. */
export function storesPerTest(engineOf: () => TestEngine): {
  stores: () => Stores;
  engine: () => TestEngine;
} {
  let engine: TestEngine;
  let stores: Stores;
  beforeEach(async () => {
    engine = engineOf();
    stores = await openEngine(engine);
  });
  afterEach(async () => {
    await stores.replicas.leave();
    await stores.calls.close();
    await engine.drop();
  });
  return { stores: () => stores, engine: () => engine };
}

/** Runs `sql` (literal values only) on the engine's database as another program would, outside the stores. */
export async function runRaw(engine: TestEngine, sql: string): Promise<Record<string, unknown>[]> {
  const url = engine.settings().databaseUrl;
  if (engine.name === 'sqlite') {
    const database = new Database(url.slice('sqlite:'.length));
    try {
      const statement = database.prepare(sql);
      return statement.reader ? (statement.all() as Record<string, unknown>[]) : (statement.run(), []);
    } finally {
      database.close();
    }
  }
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as Record<string, unknown>[];
  } finally {
    await client.end();
  }
}

/** Creates the engine's database with nothing in it (the folder, or the schema), as before a first start. */
export async function createEmpty(engine: TestEngine): Promise<void> {
  const url = engine.settings().databaseUrl;
  if (engine.name === 'sqlite') {
    mkdirSync(dirname(url.slice('sqlite:'.length)), { recursive: true });
    return;
  }
  const schema = /search_path%3D(\w+)/.exec(url)![1];
  const client = new Client({ connectionString: TEST_POSTGRES_URL });
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA ${schema}`);
  } finally {
    await client.end();
  }
}
