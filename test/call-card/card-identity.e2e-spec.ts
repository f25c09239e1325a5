import { eventually, Harness, started, ended, startHarness } from '../support/bridge-harness';
import { callStatus, postEvents } from '../delivery/delivery-support';

/**
 * The PBX may name one employee by internal number in one event and by portal user id in the next (a ring
 * group shown by extension, answered by `userId`). The card follows the person, not the spelling: through
 * HTTP into the bridge and the sandbox portal's log of show/hide/finish. Sandbox users: 2 = ext 101,
 * 3 = 102, 4 = 103.
 */
describe('call card: one employee named by extension or by userId', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({ DELIVERY_MAX_BACKOFF_SEC: '1' });
  });
  afterAll(async () => {
    await h.close();
  });

  const portalCall = (callId: string) => h.sandbox.calls({ EXTERNAL_CALL_ID: callId })[0];
  const shownTo = (callId: string) => [...(portalCall(callId)?.shownTo ?? [])].sort();
  /** The card shown to `users` on the portal, and nothing more due for the call. */
  const cardSettles = (callId: string, users: number[]) =>
    eventually(async () => {
      const status = await callStatus(h, callId);
      if (status.nextStep !== null) return undefined;
      return JSON.stringify(shownTo(callId)) === JSON.stringify(users) ? status : undefined;
    }, 15000);
  const finished = (callId: string) =>
    eventually(async () => {
      const status = await callStatus(h, callId);
      return status.state === 'finished' && status.nextStep === null ? portalCall(callId) : undefined;
    });
  const hiddenFor = (callId: string, user: number) =>
    portalCall(callId).cardLog.filter((change) => change.hidden.includes(user) && change.by !== 'finish');
  const answered = (callId: string, who: { extension?: string; userId?: number }, at: string) => ({
    event: 'call.answered',
    callId,
    ...who,
    at,
  });

  it('a ring group shown by extension, answered by userId: the answerer keeps the card', async () => {
    const callId = `by-ext-answer-by-id-${Date.now()}`;
    await postEvents(h, [started(callId, { extension: undefined, extensions: ['101', '102', '103'] })]);
    await cardSettles(callId, [2, 3, 4]);

    await postEvents(h, [answered(callId, { userId: 3 }, '2026-11-22T10:00:08+01:00')]);
    await cardSettles(callId, [3]);
    // Never hidden for the answerer: the keys 102 and user:3 are one person.
    expect(hiddenFor(callId, 3)).toEqual([]);

    await postEvents(h, [ended(callId)]);
    const done = await finished(callId);
    expect(done.finished).toMatchObject({ USER_ID: 3, STATUS_CODE: '200' });
    expect(done.shownTo).toEqual([]);
    // Shown once and closed once each: 2 and 4 by a hide on the answer, 3 by the finish.
    for (const user of [2, 3, 4]) {
      expect(done.cardLog.filter((change) => change.shown.includes(user))).toHaveLength(1);
      expect(done.cardLog.filter((change) => change.hidden.includes(user))).toHaveLength(1);
    }
    expect(done.cardLog.filter((change) => change.hidden.includes(3))[0].by).toBe('finish');
  });

  it('a call started by userId, answered by extension: the card stays, finish names the same user', async () => {
    const callId = `by-id-answer-by-ext-${Date.now()}`;
    await postEvents(h, [started(callId, { extension: undefined, userId: 4 })]);
    await cardSettles(callId, [4]);

    await postEvents(h, [answered(callId, { extension: '103' }, '2026-11-22T10:00:05+01:00')]);
    await cardSettles(callId, [4]);
    expect(hiddenFor(callId, 4)).toEqual([]);
    expect(portalCall(callId).cardLog.map((change) => change.by)).toEqual(['register']);

    await postEvents(h, [ended(callId)]);
    const done = await finished(callId);
    expect(done).toMatchObject({ USER_ID: 4, shownTo: [] });
    expect(done.finished).toMatchObject({ USER_ID: 4 });
    expect(done.cardLog.map((change) => change.by)).toEqual(['register', 'finish']);
  });

  it('transfers between the two forms move the card to the person, never away from them', async () => {
    const callId = `mixed-transfer-${Date.now()}`;
    await postEvents(h, [started(callId, { extension: undefined, extensions: ['101', '102', '103'] })]);
    await cardSettles(callId, [2, 3, 4]);

    await postEvents(h, [answered(callId, { extension: '102' }, '2026-11-22T10:00:05+01:00')]);
    await cardSettles(callId, [3]);
    // The same person answering again in the other form (a PBX reporting the answer twice): nothing moves.
    await postEvents(h, [answered(callId, { userId: 3 }, '2026-11-22T10:00:06+01:00')]);
    await cardSettles(callId, [3]);
    expect(hiddenFor(callId, 3)).toEqual([]);

    // Transferred to user 4 named by id; 103 (the same person) reporting the answer again moves nothing.
    await postEvents(h, [answered(callId, { userId: 4 }, '2026-11-22T10:00:30+01:00')]);
    await cardSettles(callId, [4]);
    await postEvents(h, [answered(callId, { extension: '103' }, '2026-11-22T10:00:31+01:00')]);
    await cardSettles(callId, [4]);
    expect(hiddenFor(callId, 4)).toHaveLength(1);
    // Then on to 101, named by extension.
    await postEvents(h, [answered(callId, { extension: '101' }, '2026-11-22T10:00:50+01:00')]);
    await cardSettles(callId, [2]);

    await postEvents(h, [ended(callId)]);
    const done = await finished(callId);
    expect(done.finished).toMatchObject({ USER_ID: 2 });
    expect(done.shownTo).toEqual([]);
    // Each hidden by a hide when the card left them: 2 and 4 on the first answer, 3 on the transfer to 4,
    // 4 again on the transfer to 2; 2 is closed by the finish.
    expect(hiddenFor(callId, 2)).toHaveLength(1);
    expect(hiddenFor(callId, 3)).toHaveLength(1);
    expect(hiddenFor(callId, 4)).toHaveLength(2);
  });
});
