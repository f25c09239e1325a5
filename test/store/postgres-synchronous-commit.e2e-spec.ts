import { Client } from 'pg';
import { CallEvent, CallRecord } from '../../src/calls/call';
import { applyEvent, newCall } from '../../src/calls/call-lifecycle';
import { loadConfig } from '../../src/config/app-config';
import { CallStore } from '../../src/store/call-store';
import { createStores } from '../../src/store/store.module';
import { onPostgres, TEST_POSTGRES_URL, TEST_SCHEMA_PREFIX } from '../support/test-database';

const PORTAL = 'durability';
const SCHEMA = `${TEST_SCHEMA_PREFIX}synchronous_commit_${process.pid}`;
/** A role or server whose default is asynchronous commit: the URL sets it for every connection of the pool. */
const ASYNC_BY_DEFAULT = `${TEST_POSTGRES_URL}?options=${encodeURIComponent(
  `-c search_path=${SCHEMA} -c synchronous_commit=off`,
)}`;

const apply = (call: CallRecord | undefined, event: CallEvent) =>
  applyEvent(call ?? newCall(PORTAL, event.callId, Date.now()), event, {
    now: Date.now(),
    holdEndedWithoutStartMs: 3_600_000,
  });

/**
 * Intake answers 202 only once the events are durable, so its transaction must commit synchronously even
 * where the server or the role defaults to `synchronous_commit = off`. A trigger on `call_events` notes the
 * setting in force inside the transaction that inserts the events, as PostgreSQL itself sees it.
 */
(onPostgres ? describe : describe.skip)('PostgreSQL intake commits synchronously', () => {
  let store: CallStore;
  let observer: Client;

  beforeAll(async () => {
    const config = loadConfig({ NODE_ENV: 'test', PBX_TOKENS: 'x', DATABASE_URL: ASYNC_BY_DEFAULT });
    store = (await createStores(config)).calls;
    observer = new Client({ connectionString: ASYNC_BY_DEFAULT });
    await observer.connect();
    await observer.query(`
      CREATE TABLE commit_settings (seen serial PRIMARY KEY, setting text NOT NULL);
      CREATE FUNCTION note_commit_setting() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO commit_settings (setting) VALUES (current_setting('synchronous_commit'));
        RETURN NULL;
      END $$;
      CREATE TRIGGER note_commit_setting AFTER INSERT ON call_events
        FOR EACH STATEMENT EXECUTE FUNCTION note_commit_setting();`);
  });
  afterAll(async () => {
    await store.close();
    await observer.query(`DROP SCHEMA ${observer.escapeIdentifier(SCHEMA)} CASCADE`);
    await observer.end();
  });

  const lastSetting = async () =>
    (
      await observer.query<{ setting: string }>(
        'SELECT setting FROM commit_settings ORDER BY seen DESC LIMIT 1',
      )
    ).rows[0]?.setting;

  it('the connections default to off: an insert outside intake runs with it off', async () => {
    expect(
      (await observer.query<{ value: string }>('SELECT current_setting($1) AS value', ['synchronous_commit']))
        .rows[0].value,
    ).toBe('off');
    await observer.query(
      `INSERT INTO call_events (portal_id, call_id, event, payload, received_at) VALUES ('other', 'x', 'call.started', '{}', 0)`,
    );
    expect(await lastSetting()).toBe('off');
  });

  it("intake's transaction runs with synchronous_commit on", async () => {
    const event: CallEvent = {
      event: 'call.started',
      callId: 'durable-1',
      direction: 'inbound',
      phoneNumber: '+4915112345678',
      at: '2026-11-22T10:00:00+01:00',
    };
    expect(await store.ingest(PORTAL, [[event]], apply)).toEqual([{ accepted: 1, duplicates: 0 }]);
    expect(await lastSetting()).toBe('on');
  });
});
