import { PortalRuntime } from '../../src/tenancy/portal-runtime';
import { ended, eventually, Harness, PBX_TOKEN, started, startHarness } from '../support/bridge-harness';
import { postEvents } from './delivery-support';

/**
 * Item 6: lookups go ahead of delivery, but a wave of cache misses faster than the portal's rate must not
 * stop delivery (background keeps one unit in four), and shutdown must not hang on the loop's budget wait.
 */
describe('delivery keeps a share of the budget under a lookup wave', () => {
  let h: Harness;

  beforeAll(async () => {
    // A small bucket, so the wave exhausts it within a second or two and then runs at the drain rate.
    h = await startHarness({ B24_RATE_LIMIT_RPS: '2', B24_RATE_BURST: '4', PBX_RATE_LIMIT_RPS: '1000' });
  });
  afterAll(async () => {
    await h.close();
  });

  it('calls are delivered while lookups of random numbers keep arriving above the portal rate', async () => {
    let waving = true;
    let lookups = 0;
    const lookupLoop = async (lane: number) => {
      while (waving) {
        const phone = `+4930${lane}${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;
        await h.http
          .get(`/v1/lookup?phone=${encodeURIComponent(phone)}`)
          .set('Authorization', `Bearer ${PBX_TOKEN}`);
        lookups += 1;
      }
    };
    // Eight lookups always waiting: more than the 2 units a second the budget grants.
    const wave = Array.from({ length: 8 }, (_, lane) => lookupLoop(lane));
    try {
      const budget = h.app.get(PortalRuntime).client.budget;
      await eventually(async () => (budget.snapshot().waiting >= 4 ? true : undefined));
      const ids = Array.from({ length: 5 }, (_, i) => `wave-${Date.now()}-${i}`);
      await postEvents(
        h,
        ids.flatMap((callId, i) => [started(callId, { phoneNumber: `+4915130000${i}` }), ended(callId)]),
      );
      const delivered = await eventually(async () => {
        const calls = h.sandbox.calls().filter((call) => ids.includes(call.EXTERNAL_CALL_ID));
        return calls.length === ids.length && calls.every((call) => call.finished) ? calls : undefined;
      }, 40000);
      expect(delivered).toHaveLength(ids.length);
      // The wave was still going: lookups were answered all along.
      expect(waving).toBe(true);
      expect(lookups).toBeGreaterThan(8);
    } finally {
      waving = false;
      await Promise.all(wave);
    }
  });
});

describe('shutdown while delivery waits for the budget', () => {
  it('closes the bridge although the budget grants nothing for a long time', async () => {
    // One unit, then one every 1000 s: the delivery loop waits for the budget with a call due.
    const h = await startHarness({ B24_RATE_LIMIT_RPS: '0.001', B24_RATE_BURST: '1' });
    let closed = false;
    try {
      const callId = `stuck-${Date.now()}`;
      await postEvents(h, [started(callId), ended(callId)]);
      const budget = h.app.get(PortalRuntime).client.budget;
      await eventually(async () => (budget.snapshot().waiting >= 1 ? true : undefined));
    } finally {
      // Before the fix this never resolved (the loop's wait was not cancelled): the test timed out.
      await h.close();
      closed = true;
    }
    expect(closed).toBe(true);
  });
});
