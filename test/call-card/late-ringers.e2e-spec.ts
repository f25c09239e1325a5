import { Harness, started, ended, startHarness } from '../support/bridge-harness';
import { callStatus, postEvents } from '../delivery/delivery-support';
import { cardChecks } from './card-support';

/**
 * Phones that start ringing after the call's `call.started` went out (a queue's next member, a hunt group,
 * follow-me) are shown the card too (the API contract: "phones that start ringing later are shown the card
 * too"): a later `call.started` naming them. Through HTTP into the bridge and the sandbox portal's log of
 * register/show/hide/finish. Sandbox users: 2 = ext 101, 3 = 102, 4 = 103. Phones ringing after the answer
 * (a blind transfer's target): `transfer-target.e2e-spec.ts`.
 */
describe('call card: phones that start ringing later', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({ DELIVERY_MAX_BACKOFF_SEC: '1' });
  });
  afterAll(async () => {
    await h.close();
  });

  const { post, cardSettles, finished, answered } = cardChecks(() => h);
  const ringsToo = (callId: string, extensions: string[], at: string) =>
    started(callId, { extension: undefined, extensions, at });

  it('a queue: 101 rings, then 102 too; 102 answers: shown to 101 then 102, hidden for 101, finished with 102', async () => {
    const callId = `queue-late-${Date.now()}`;
    expect((await post([started(callId)])).body).toEqual({ accepted: 1, duplicates: 0 });
    await cardSettles(callId, [2]);

    // The queue's next member: 101 still rings (ring-all) or not (linear): the event names who rings now.
    const late = await post([ringsToo(callId, ['101', '102'], '2026-11-22T10:00:15+01:00')]);
    expect(late.body).toEqual({ accepted: 1, duplicates: 0 });
    const ringing = await cardSettles(callId, [2, 3]);
    expect(ringing.cardLog.map((change) => [change.by, change.shown])).toEqual([
      ['register', [2]],
      ['show', [3]],
    ]);
    // A repeat, or a start naming nobody new, is a duplicate.
    const again = await post([
      ringsToo(callId, ['101', '102'], '2026-11-22T10:00:15+01:00'),
      ringsToo(callId, ['102'], '2026-11-22T10:00:16+01:00'),
      started(callId),
    ]);
    expect(again.body).toEqual({ accepted: 0, duplicates: 3 });
    const status = (await callStatus(h, callId)) as unknown as { card: { ringing: string[] } };
    expect(status.card).toMatchObject({ ringing: ['101', '102'] });

    await postEvents(h, [answered(callId, '102', '2026-11-22T10:00:20+01:00')]);
    await cardSettles(callId, [3]);
    await postEvents(h, [ended(callId)]);
    const done = await finished(callId);
    expect(done).toMatchObject({ USER_ID: 2, registerRequests: 1, shownTo: [] });
    expect(done.finished).toMatchObject({ USER_ID: 3, DURATION: 121, STATUS_CODE: '200' });
    expect(done.cardLog.map((change) => [change.by, change.shown, change.hidden])).toEqual([
      ['register', [2], []],
      ['show', [3], []],
      ['hide', [], [2]],
      ['finish', [], [3]],
    ]);
  });

  it('a late phone heard before the register went out is shown the card with it', async () => {
    const callId = `queue-early-${Date.now()}`;
    const body = await post([
      started(callId),
      ringsToo(callId, ['102'], '2026-11-22T10:00:15+01:00'),
      ringsToo(callId, ['103', '102'], '2026-11-22T10:00:25+01:00'),
    ]);
    expect(body.body).toEqual({ accepted: 3, duplicates: 0 });
    const ringing = await cardSettles(callId, [2, 3, 4]);
    expect(ringing).toMatchObject({ USER_ID: 2, registerRequests: 1 });
    await postEvents(h, [ended(callId, { status: 'missed', durationSec: 0 })]);
    const done = await finished(callId);
    expect(done.finished).toMatchObject({ USER_ID: 2, STATUS_CODE: '304' });
    expect(done.shownTo).toEqual([]);
  });
});
