import { withDelivery } from '../../../src/calls/call';
import { markCardHidden } from '../../../src/calls/call-lifecycle';
import { callColumnsOf } from '../../../src/store/call-rows';
import { callFromStored } from '../../../src/store/stored-call';
import { PARKED, PARKED_HIDDEN, RINGING } from '../../fixtures/flat-calls';
import { TEST_ENGINES } from '../../support/test-database';
import { runRaw, storesPerTest } from './engines';

/**
 * Rows as every release stores them (flat `data`), on both engines: read as their parts, listed by the
 * columns as before, and written back flat, so the previous release beside this one in a rolling update
 * reads what this one wrote; no SQL migration.
 */
describe.each(TEST_ENGINES)('flat call rows (%s)', (_name, engineOf) => {
  const { stores, engine } = storesPerTest(engineOf);

  /** The row as the flat record's code wrote it: its columns, and its data the flat JSON. */
  async function insertFlat(data: string): Promise<void> {
    const columns = { ...callColumnsOf(callFromStored(data)), data };
    const names = Object.keys(columns).join(', ');
    const values = Object.values(columns)
      .map((value) =>
        value === null ? 'NULL' : typeof value === 'number' ? value : `'${value.replace(/'/g, "''")}'`,
      )
      .join(', ');
    await runRaw(engine(), `INSERT INTO calls (${names}) VALUES (${values})`);
  }

  it('reads a flat row as its parts, lists it by its columns, and writes it back flat', async () => {
    await insertFlat(RINGING);
    await insertFlat(PARKED);
    const ringing = await stores().calls.findCall('portal-1', 'pbx-42');
    expect(ringing).toEqual(callFromStored(RINGING));
    expect(ringing!.party.ringing).toEqual(['101', '102', '103']);
    expect((await stores().calls.listCalls('portal-1', 'failed', 10)).map((call) => call.callId)).toEqual([
      'pbx-7',
    ]);
    const due = await stores().calls.dueCalls('portal-1', 1764000009000, 10, new Set());
    expect(due.map((call) => call.callId).sort()).toEqual(['pbx-42', 'pbx-7']);

    const [hidden] = await stores().calls.updateCalls('portal-1', ['pbx-7'], (call) =>
      markCardHidden(call, 1764000001000),
    );
    expect(hidden.card).toEqual({ shown: [], maybe: [], sending: {}, userIds: [5] });
    const [row] = await runRaw(engine(), "SELECT data FROM calls WHERE call_id = 'pbx-7'");
    const written = JSON.parse(String(row.data)) as Record<string, unknown>;
    // What the flat code stored for the same change (test/fixtures/flat-calls.ts), field for field.
    expect(written).toEqual(JSON.parse(PARKED_HIDDEN));
    expect(written).not.toHaveProperty('delivery');
    expect(written).not.toHaveProperty('card');
    expect(await stores().calls.findCall('portal-1', 'pbx-7')).toEqual(hidden);

    // A flat row changed by the rules reads the same as when it was first read, bar the change.
    const [retried] = await stores().calls.updateCalls('portal-1', ['pbx-42'], (call) =>
      withDelivery(call, { lastError: 'noted' }),
    );
    expect(retried).toEqual(withDelivery(callFromStored(RINGING), { lastError: 'noted' }));
  });
});
