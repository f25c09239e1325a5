import Database from 'better-sqlite3';
import { join } from 'node:path';
import { Client } from 'pg';
import { ended, eventually, Harness, started, startHarness } from '../support/bridge-harness';
import { onPostgres, testDatabaseUrl } from '../support/test-database';
import { callStatus, postEvents } from './delivery-support';

/** Makes the store refuse to park held calls (ids starting `held-`), as a failing write would. */
interface StoreFault {
  remove(): Promise<void>;
}

async function refuseParkingHeldCalls(h: Harness): Promise<StoreFault> {
  if (onPostgres) {
    const client = new Client({ connectionString: testDatabaseUrl(h.dir) });
    await client.connect();
    await client.query(`
      CREATE FUNCTION h3_refuse_parking() RETURNS trigger AS $$
      BEGIN RAISE EXCEPTION 'injected: the store refuses to park held calls'; END $$ LANGUAGE plpgsql`);
    await client.query(`
      CREATE TRIGGER h3_refuse_parking BEFORE UPDATE ON calls FOR EACH ROW
      WHEN (NEW.state = 'failed' AND NEW.call_id LIKE 'held-%') EXECUTE FUNCTION h3_refuse_parking()`);
    return {
      async remove() {
        await client.query('DROP TRIGGER h3_refuse_parking ON calls');
        await client.query('DROP FUNCTION h3_refuse_parking()');
        await client.end();
      },
    };
  }
  const db = new Database(join(h.dir, 'bridge.sqlite'));
  db.pragma('busy_timeout = 5000');
  db.exec(`
    CREATE TRIGGER h3_refuse_parking BEFORE UPDATE ON calls
    WHEN NEW.state = 'failed' AND NEW.call_id LIKE 'held-%'
    BEGIN SELECT RAISE(ABORT, 'injected: the store refuses to park held calls'); END`);
  return {
    async remove() {
      db.exec('DROP TRIGGER h3_refuse_parking');
      db.close();
    },
  };
}

/**
 * Item 5: parking held calls (expireHeld) failing must not strand the batch's other calls in memory: they
 * used to stay "in flight" for the life of the process and were never delivered.
 */
describe('a failure parking held calls', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({ HOLD_ENDED_WITHOUT_START_SEC: '1' });
  });
  afterAll(async () => {
    await h.close();
  });

  it('leaves the calls planned with them free: they are delivered, and the held call is parked once the store recovers', async () => {
    const fault = await refuseParkingHeldCalls(h);
    const held = `held-${Date.now()}`;
    const regular = `regular-${Date.now()}`;
    try {
      await postEvents(h, [ended(held)]);
      // Past the hold, the held call is due in every batch from now on (ordered first), and parking it fails.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await postEvents(h, [started(regular), ended(regular)]);
      const delivered = await eventually(async () => {
        const status = await callStatus(h, regular);
        return status.state === 'finished' ? status : undefined;
      });
      expect(delivered.lastError).toBeNull();
      expect((await callStatus(h, held)).state).toBe('queued');
    } finally {
      await fault.remove();
    }
    const parked = await eventually(async () => {
      const status = await callStatus(h, held);
      return status.state === 'failed' ? status : undefined;
    });
    expect(parked.lastError).toContain('HOLD_ENDED_WITHOUT_START_SEC');
  });
});
