import { eventually, Harness, PBX_TOKEN, started, startHarness } from '../support/bridge-harness';

/**
 * Ringing first (docs/API.md): with history waiting (a CDR import of finished calls, register + finish each),
 * a ringing call's register and its ring group's show overtake it. Asserted by order, not time: the ringing
 * call reaches the portal in one of the first requests after its 202, while most of the history still waits.
 */
describe('call card: ringing first', () => {
  let h: Harness;
  /**
   * History calls (two commands each). The burst and the time the ringing call's own post takes let a few
   * hundred commands go before its 202 (more on a loaded machine): the history is long enough that most of
   * it still waits then, whatever the load.
   */
  const HISTORY = 800;

  beforeAll(async () => {
    h = await startHarness({ B24_RATE_BURST: '5' }, { rateBurst: 5, rateLimitRps: 2 });
  });
  afterAll(async () => {
    await h.close();
  });

  const post = async (body: unknown[]) => {
    const response = await h.http
      .post('/v1/calls/events')
      .set('Authorization', `Bearer ${PBX_TOKEN}`)
      .send(body);
    expect(response.status).toBe(202);
  };

  it('a ringing call overtakes 1 600 commands of history waiting', async () => {
    const history = Array.from({ length: HISTORY }, (_, n) => ({
      event: 'call.ended',
      callId: `history-${n}`,
      direction: 'outbound',
      phoneNumber: `+4930${4000000 + n}`,
      extension: '101',
      startedAt: '2026-11-24T09:00:00+01:00',
      at: '2026-11-24T09:01:00+01:00',
      durationSec: 60,
      status: 'answered',
    }));
    for (let offset = 0; offset < HISTORY; offset += 200) await post(history.slice(offset, offset + 200));
    // Delivery of the history has begun.
    await eventually(async () => (h.sandbox.stats().commands > 0 ? true : undefined));

    await post([started('ringing-now', { extension: undefined, extensions: ['101', '102'] })]);
    // Counted at the 202, not before the post: on a loaded machine history batches go while it is stored.
    const acknowledgedAt = Date.now();
    // Its register and the ring group's show; a card log of another length fails below, showing it.
    const ringing = await eventually(
      async () =>
        (h.sandbox.calls({ EXTERNAL_CALL_ID: 'ringing-now' })[0]?.cardLog.length ?? 0) >= 2 || undefined,
    );
    expect(ringing).toBe(true);
    const call = h.sandbox.calls({ EXTERNAL_CALL_ID: 'ringing-now' })[0];
    expect(call.cardLog).toHaveLength(2);
    expect(call.shownTo.sort()).toEqual([2, 3]);

    const batches = h.sandbox.requests().filter((entry) => entry.method === 'batch');
    const requestsBefore = batches.filter((entry) => entry.at <= acknowledgedAt).length;
    // The request that registered it: the last to arrive before the register ran.
    const carrying = batches.filter((entry) => entry.at <= call.registeredAt).length - 1;
    // It is among the first after the 202 (requests already planned may go first).
    expect(carrying - requestsBefore).toBeLessThanOrEqual(3);
    // Most of the 1 600 history commands were still waiting when it went.
    const deliveredBefore = batches.slice(0, carrying).reduce((sum, entry) => sum + entry.commands, 0);
    expect(deliveredBefore).toBeLessThan(HISTORY);
  });
});
