import { eventually, Harness, started, ended, startHarness } from '../support/bridge-harness';
import { callStatus, postEvents } from '../delivery/delivery-support';

/**
 * The live call card (docs/API.md) through HTTP into the bridge and the sandbox portal over real HTTP: a
 * ring group sees the card, the answerer keeps it, a transfer moves it, finish names the answerer, and a
 * call that ended before its register went out pops nothing. Sandbox users: 2 = ext 101, 3 = 102, 4 = 103.
 */
describe('call card: ring groups, answer and transfer', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({ DELIVERY_MAX_BACKOFF_SEC: '1' });
  });
  afterAll(async () => {
    await h.close();
  });

  const portalCall = (callId: string) =>
    eventually(async () => h.sandbox.calls({ EXTERNAL_CALL_ID: callId })[0]);
  const cardOf = (callId: string, shownTo: number[]) =>
    eventually(async () => {
      const call = h.sandbox.calls({ EXTERNAL_CALL_ID: callId })[0];
      const sorted = [...(call?.shownTo ?? [])].sort();
      return call && JSON.stringify(sorted) === JSON.stringify(shownTo) ? call : undefined;
    });
  const settled = (callId: string) =>
    eventually(async () => {
      const status = await callStatus(h, callId);
      return status.state === 'finished' && status.nextStep === null ? status : undefined;
    });
  const answered = (callId: string, extension: string, at: string) => ({
    event: 'call.answered',
    callId,
    extension,
    at,
  });

  it('shows a ringing group the card, hides it for the others on answer, finishes with the answerer', async () => {
    const callId = `group-${Date.now()}`;
    await postEvents(h, [started(callId, { extension: undefined, extensions: ['101', '102', '103'] })]);
    const ringing = await cardOf(callId, [2, 3, 4]);
    // Registered for the first member, shown to the others in the same request.
    expect(ringing).toMatchObject({ USER_ID: 2, SHOW: true, registerRequests: 1 });
    expect(ringing.cardLog.map((change) => change.by)).toEqual(['register', 'show']);
    const metrics = await eventually(async () => {
      const { text } = await h.http.get('/metrics');
      return /bridge_ring_to_card_seconds_count\{portal="sandbox"\} [1-9]/.test(text) ? text : undefined;
    });
    expect(metrics).toContain('bridge_ring_to_card_seconds_bucket');

    await postEvents(h, [answered(callId, '102', '2026-11-22T10:00:08+01:00')]);
    await cardOf(callId, [3]);

    await postEvents(h, [ended(callId)]);
    await settled(callId);
    const done = await portalCall(callId);
    expect(done.finished).toMatchObject({ USER_ID: 3, DURATION: 121, STATUS_CODE: '200' });
    expect(done.shownTo).toEqual([]);
    // Each member saw the card appear once and disappear once.
    for (const user of [2, 3, 4]) {
      expect(done.cardLog.filter((change) => change.shown.includes(user))).toHaveLength(1);
      expect(done.cardLog.filter((change) => change.hidden.includes(user))).toHaveLength(1);
    }
  });

  it('a transfer moves the card to the new answerer; the repeated answer is a duplicate', async () => {
    const callId = `transfer-${Date.now()}`;
    await postEvents(h, [started(callId)]);
    await cardOf(callId, [2]);
    await postEvents(h, [answered(callId, '101', '2026-11-22T10:00:05+01:00')]);
    const again = await h.http
      .post('/v1/calls/events')
      .set('Authorization', 'Bearer pbx-test-token-7f3a')
      .send([answered(callId, '101', '2026-11-22T10:00:05+01:00')]);
    expect(again.body).toEqual({ accepted: 0, duplicates: 1 });

    const transfer = await h.http
      .post('/v1/calls/events')
      .set('Authorization', 'Bearer pbx-test-token-7f3a')
      .send([answered(callId, '103', '2026-11-22T10:00:40+01:00')]);
    expect(transfer.body).toEqual({ accepted: 1, duplicates: 0 });
    await cardOf(callId, [4]);

    await postEvents(h, [ended(callId)]);
    await settled(callId);
    const done = await portalCall(callId);
    expect(done.USER_ID).toBe(2);
    expect(done.finished).toMatchObject({ USER_ID: 4 });
    expect(done.shownTo).toEqual([]);
  });

  it('a missed ring group: finish closes the first member card, a hide the rest', async () => {
    const callId = `missed-${Date.now()}`;
    await postEvents(h, [started(callId, { extensions: ['101', '102'] })]);
    await cardOf(callId, [2, 3]);
    await postEvents(h, [ended(callId, { status: 'missed', durationSec: 0 })]);
    await settled(callId);
    const done = await cardOf(callId, []);
    expect(done.finished).toMatchObject({ USER_ID: 2, STATUS_CODE: '304' });
  });

  it('a call that ended before its register went out is registered with SHOW=0', async () => {
    const callId = `late-${Date.now()}`;
    await postEvents(h, [
      started(callId, { extensions: ['101', '102'] }),
      ended(callId, { status: 'missed', durationSec: 0 }),
    ]);
    await settled(callId);
    const done = await portalCall(callId);
    expect(done).toMatchObject({ SHOW: false, shownTo: [], cardLog: [] });
    expect(done.finished).toMatchObject({ USER_ID: 2, STATUS_CODE: '304' });
  });

  it('answered before the register went out: registered for the answerer alone', async () => {
    const callId = `quick-${Date.now()}`;
    await postEvents(h, [
      started(callId, { extension: undefined, extensions: ['101', '102', '103'] }),
      answered(callId, '103', '2026-11-22T10:00:01+01:00'),
    ]);
    const ringing = await cardOf(callId, [4]);
    expect(ringing).toMatchObject({ USER_ID: 4 });
    expect(ringing.cardLog.map((change) => change.by)).toEqual(['register']);
  });

  it('names what is wrong with extensions', async () => {
    const bad = await h.http
      .post('/v1/calls/events')
      .set('Authorization', 'Bearer pbx-test-token-7f3a')
      .send([
        started('bad-1', { extensions: [] }),
        { ...ended('bad-2'), extensions: ['101'] },
        started('bad-3', { extensions: Array.from({ length: 51 }, (_, i) => `${i}`) }),
      ]);
    expect(bad.status).toBe(400);
    const fields = (bad.body.errors as { index: number; field: string }[]).map((e) => [e.index, e.field]);
    expect(fields).toEqual([
      [0, 'extensions'],
      [1, 'extensions'],
      [2, 'extensions'],
    ]);
    expect(await callStatus(h, 'bad-1')).not.toHaveProperty('state');
  });
});
