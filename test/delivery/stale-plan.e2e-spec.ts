import { CallRecord } from '../../src/calls/call';
import { markRegistered, markRetry } from '../../src/calls/call-lifecycle';
import { CallStore } from '../../src/store/call-store';
import { ended, eventually, Harness, started, startHarness } from '../support/bridge-harness';
import { callStatus, postEvents } from './delivery-support';

/**
 * Item 13b: a batch plans from a read that may predate another batch's answer (PostgreSQL answers
 * asynchronously). The batch's read of the queue is held here until "another batch" has moved one call
 * on: that call must not be sent early from the stale plan; the other calls of the batch go out as planned.
 */
describe('a plan made from a stale read', () => {
  let h: Harness;
  /** While set, every batch's read of the queue is answered only when it resolves. */
  let gate: Promise<void> | undefined;
  let firstHeld: (() => void) | undefined;

  beforeAll(async () => {
    h = await startHarness();
    const store = h.app.get(CallStore);
    const read = store.dueCalls.bind(store);
    // The store's own answer, handed over late, as a slow round-trip to the database would.
    store.dueCalls = async (...args: Parameters<CallStore['dueCalls']>) => {
      const rows = await read(...args);
      if (gate && args[2] > 1) {
        firstHeld?.();
        await gate;
      }
      return rows;
    };
    // The loop's own look, which a quiet portal's batch plans from, is held the same way.
    const look = store.lookDue.bind(store);
    store.lookDue = async (...args: Parameters<CallStore['lookDue']>) => {
      const answer = await look(...args);
      if (gate && args[2] > 1 && answer.due.length > 0) {
        firstHeld?.();
        await gate;
      }
      return answer;
    };
  });
  afterAll(async () => {
    await h.close();
  });

  it('does not send a call another batch moved on meanwhile, and sends the rest', async () => {
    const moved = `moved-${Date.now()}`;
    const plain = `plain-${Date.now()}`;
    let release!: () => void;
    gate = new Promise<void>((resolve) => (release = resolve));
    const held = new Promise<void>((resolve) => (firstHeld = resolve));
    await postEvents(h, [
      started(moved, { phoneNumber: '+4915150000001' }),
      ended(moved),
      started(plain, { phoneNumber: '+4915150000002' }),
      ended(plain),
    ]);
    await held;
    // "Another batch" registered the call meanwhile, and its finish is not due for a minute.
    const now = Date.now();
    await h.app
      .get(CallStore)
      .updateCalls('sandbox', [moved], (call: CallRecord) =>
        markRetry(
          markRegistered(call, { callId: 'externalCall.from-another-batch' }, now),
          'retrying later',
          now + 60_000,
          now,
        ),
      );
    gate = undefined;
    release();

    await eventually(async () => ((await callStatus(h, plain)).state === 'finished' ? true : undefined));
    const status = await callStatus(h, moved);
    expect(status).toMatchObject({ state: 'registered', nextStep: 'finish', attempts: 0 });
    expect(h.sandbox.calls().filter((call) => call.EXTERNAL_CALL_ID === moved)).toEqual([]);
  });
});
