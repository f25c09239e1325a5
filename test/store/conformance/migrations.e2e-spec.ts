import { applyEvent, newCall } from '../../../src/calls/call-lifecycle';
import { POSTGRES_MIGRATIONS } from '../../../src/store/postgres/postgres-migrations';
import { SQLITE_MIGRATIONS } from '../../../src/store/sqlite/sqlite-migrations';
import { callToStored } from '../../../src/store/stored-call';
import { startedEvent } from '../../support/call-events';
import { TEST_ENGINES, TestEngine } from '../../support/test-database';
import { createEmpty, openEngine, runRaw } from './engines';

/** Migrations, on both engines: from an empty database, and from the first schema with a user's data in it. */
describe.each(TEST_ENGINES)('migrations (%s)', (name, engineOf) => {
  const migrations = name === 'sqlite' ? SQLITE_MIGRATIONS : POSTGRES_MIGRATIONS;
  let engine: TestEngine;
  beforeEach(() => (engine = engineOf()));
  afterEach(() => engine.drop());

  const versions = async () =>
    (await runRaw(engine, 'SELECT version FROM schema_migrations ORDER BY version')).map((row) =>
      Number(row.version),
    );

  it('an empty database gets every migration once; a second process opening it applies none again', async () => {
    const [first, second] = await Promise.all([openEngine(engine), openEngine(engine)]);
    try {
      expect(await versions()).toEqual(migrations.map((_, index) => index + 1));
      await first.calls.checkWritable();
      await second.calls.checkWritable();
    } finally {
      await first.calls.close();
      await second.calls.close();
    }
  });

  it("a database of the first schema is upgraded with the user's calls and event keys kept", async () => {
    const call = applyEvent(newCall('p', 'kept', 1000), startedEvent('kept'), {
      now: 1000,
      holdEndedWithoutStartMs: 60_000,
    });
    await createEmpty(engine);
    await runRaw(engine, 'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT)');
    for (const statement of migrations[0].split(';').filter((text) => text.trim() !== '')) {
      await runRaw(engine, statement);
    }
    await runRaw(engine, 'INSERT INTO schema_migrations (version, applied_at) VALUES (1, 0)');
    // A row's data is the flat record every release reads (src/store/stored-call.ts).
    const data = callToStored(call).replace(/'/g, "''");
    await runRaw(
      engine,
      `INSERT INTO calls (portal_id, call_id, state, next_step, due_at, created_at, updated_at, data)
       VALUES ('p', 'kept', 'queued', 'register', 1000, 1000, 1000, '${data}')`,
    );
    await runRaw(
      engine,
      `INSERT INTO call_events (portal_id, call_id, event, payload, received_at)
       VALUES ('p', 'kept', 'call.started', '{}', 1000)`,
    );

    const stores = await openEngine(engine);
    try {
      expect(await versions()).toEqual(migrations.map((_, index) => index + 1));
      expect(await stores.calls.findCall('p', 'kept')).toEqual(call);
      expect((await stores.calls.dueCalls('p', 2000, 10, new Set())).map((due) => due.callId)).toEqual([
        'kept',
      ]);
      // Its stored event key still drops a repeat.
      const repeat = await stores.calls.ingest('p', [[startedEvent('kept')]], (stored) => stored!);
      expect(repeat).toEqual([{ accepted: 0, duplicates: 1 }]);
    } finally {
      await stores.calls.close();
    }
  });
});
