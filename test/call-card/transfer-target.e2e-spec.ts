import { Harness, started, ended, startHarness } from '../support/bridge-harness';
import { postEvents } from '../delivery/delivery-support';
import { cardChecks } from './card-support';

/**
 * A phone that starts ringing after the answer (a blind transfer: the outside party's channel dials 103
 * after the transfer and it rings a second or so) is shown the call card while it rings: a later
 * `call.started` naming it, posted after the answer. The answerer keeps the card; the next answer by
 * someone else or the end hides it for the ringing phone. Through HTTP into the bridge and the sandbox
 * portal's log of register/show/hide/finish. Sandbox users: 2 = ext 101, 3 = 102, 4 = 103.
 */
describe('call card: the target of a blind transfer', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({ DELIVERY_MAX_BACKOFF_SEC: '1' });
  });
  afterAll(async () => {
    await h.close();
  });

  const { post, cardSettles, finished, answered } = cardChecks(() => h);
  const rings = (callId: string, extension: string, at: string) => started(callId, { extension, at });
  const cardLog = (call: { cardLog: { by: string; shown: number[]; hidden: number[] }[] }) =>
    call.cardLog.map((change) => [change.by, change.shown, change.hidden]);

  /** 101 rings and answers, then transfers blind to 103, which rings: both see the card. */
  async function transferredToRinging(callId: string) {
    await postEvents(h, [started(callId)]);
    await cardSettles(callId, [2]);
    await postEvents(h, [answered(callId, '101', '2026-11-22T10:00:05+01:00')]);
    const target = await post([rings(callId, '103', '2026-11-22T10:00:40+01:00')]);
    expect(target.body).toEqual({ accepted: 1, duplicates: 0 });
    // The tracker may say it again (a resync, an overlap of two followers): a duplicate.
    const repeat = await post([rings(callId, '103', '2026-11-22T10:00:40+01:00')]);
    expect(repeat.body).toEqual({ accepted: 0, duplicates: 1 });
    await cardSettles(callId, [2, 4]);
  }

  it('103 rings after the transfer: shown the card; it answers: hidden for 101, finished with 103', async () => {
    const callId = `blind-transfer-${Date.now()}`;
    await transferredToRinging(callId);
    await postEvents(h, [answered(callId, '103', '2026-11-22T10:00:41+01:00')]);
    await cardSettles(callId, [4]);
    await postEvents(h, [ended(callId, { durationSec: 115 })]);
    const done = await finished(callId);
    expect(done.finished).toMatchObject({ USER_ID: 4, DURATION: 115, STATUS_CODE: '200' });
    expect(done.shownTo).toEqual([]);
    expect(cardLog(done)).toEqual([
      ['register', [2], []],
      ['show', [4], []],
      ['hide', [], [2]],
      ['finish', [], [4]],
    ]);
  });

  it('the caller hangs up while 103 still rings: hidden for 103, finished with 101', async () => {
    const callId = `blind-transfer-gone-${Date.now()}`;
    await transferredToRinging(callId);
    await postEvents(h, [ended(callId, { durationSec: 36 })]);
    const done = await finished(callId);
    expect(done.finished).toMatchObject({ USER_ID: 2, DURATION: 36, STATUS_CODE: '200' });
    expect(done.shownTo).toEqual([]);
    expect(cardLog(done).slice(0, 2)).toEqual([
      ['register', [2], []],
      ['show', [4], []],
    ]);
    // The finish closes 101's card, a hide 103's (in one request: either order).
    expect(cardLog(done).slice(2).sort()).toEqual(
      [
        ['finish', [], [2]],
        ['hide', [], [4]],
      ].sort(),
    );
  });
});
