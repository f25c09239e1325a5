import { clearFaults, injectFault } from '../support/sandbox-inspect';
import { ADMIN_TOKEN, ended, eventually, Harness, started, startHarness } from '../support/bridge-harness';
import { callStatus, postEvents } from './delivery-support';

const NOT_FOUND = 'Call is not found (call should be registered prior to finishing)';

/**
 * Item 12: a finish refused for good hides the card that popped; a re-queued finish counts from zero (so
 * "Call is not found" is not taken for a repeat); a call.started after the hold expired revives the call.
 */
describe('parked finishes and late starts', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({ HOLD_ENDED_WITHOUT_START_SEC: '1' });
  });
  afterAll(async () => {
    await h.close();
  });
  afterEach(async () => {
    await clearFaults(h.sandbox);
  });

  const settled = (callId: string, state: string) =>
    eventually(async () => {
      const status = await callStatus(h, callId);
      return status.state === state && status.nextStep === null ? status : undefined;
    });

  const refuseFinishes = () =>
    injectFault(h.sandbox, {
      kind: 'http',
      status: 400,
      error: '',
      description: NOT_FOUND,
      method: 'telephony.externalcall.finish',
    });

  it('hides the card a parked finish left open', async () => {
    const callId = `parked-${Date.now()}`;
    await refuseFinishes();
    await postEvents(h, [started(callId)]);
    const [ringing] = await eventually(async () => {
      const calls = h.sandbox.calls().filter((call) => call.EXTERNAL_CALL_ID === callId);
      return calls.length ? calls : undefined;
    });
    expect(ringing.shownTo).toEqual([2]);
    await postEvents(h, [ended(callId)]);

    const parked = await settled(callId, 'failed');
    expect(parked.lastError).toContain(NOT_FOUND);
    const [portalCall] = h.sandbox.calls().filter((call) => call.EXTERNAL_CALL_ID === callId);
    expect(portalCall.finished).toBeNull();
    expect(portalCall.shownTo).toEqual([]);
  });

  it('a re-queued finish counts from zero: refused again with "Call is not found", it stays failed', async () => {
    const callId = `requeued-${Date.now()}`;
    await refuseFinishes();
    await postEvents(h, [started(callId), ended(callId)]);
    const parked = await settled(callId, 'failed');

    const requeued = await h.http
      .post(`/v1/admin/calls/${callId}/requeue`)
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`);
    expect(requeued.status).toBe(200);
    const again = await eventually(async () => {
      const status = await callStatus(h, callId);
      return status.attempts > parked.attempts && status.nextStep === null ? status : undefined;
    });
    expect(again.state).toBe('failed');
    expect(again.lastError).toContain(NOT_FOUND);
    expect(h.sandbox.calls().filter((call) => call.EXTERNAL_CALL_ID === callId)[0].finished).toBeNull();
  });

  it('a call.started arriving after the hold expired revives the call', async () => {
    const callId = `late-${Date.now()}`;
    await postEvents(h, [ended(callId)]);
    const held = await settled(callId, 'failed');
    expect(held.lastError).toContain('HOLD_ENDED_WITHOUT_START_SEC');

    await postEvents(h, [started(callId)]);
    const finished = await settled(callId, 'finished');
    expect(finished.lastError).toBeNull();
    const [call] = h.sandbox.calls().filter((candidate) => candidate.EXTERNAL_CALL_ID === callId);
    expect(call).toMatchObject({ SHOW: false });
    expect(call.finished).toMatchObject({ DURATION: 121 });
  });
});
