import { ended, eventually, Harness, PBX_TOKEN, started, startHarness } from '../support/bridge-harness';
import { callStatus } from '../delivery/delivery-support';
import { clearFaults, injectFault } from '../support/sandbox-inspect';

/**
 * A second `call.ended` that brings more is merged, not dropped as a duplicate: FreeSWITCH posts its JSON
 * CDR before the event socket's hang-up goes out, and either may lack what the other has (the recording,
 * the answer). A repeat with nothing new stays a duplicate; what the portal was sent stays sent (a finish
 * that went out as missed), but a recording still attaches. Through HTTP into the bridge and the sandbox
 * portal's record of finish and attachRecord.
 */
describe('PBX intake: a second call.ended that brings more', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({ DELIVERY_MAX_BACKOFF_SEC: '1' });
  });
  afterAll(async () => {
    await h.close();
  });
  afterEach(async () => {
    await clearFaults(h.sandbox);
  });

  const post = (events: unknown[]) =>
    h.http.post('/v1/calls/events').set('Authorization', `Bearer ${PBX_TOKEN}`).send(events);
  const portalCall = (callId: string) => h.sandbox.calls({ EXTERNAL_CALL_ID: callId })[0];
  const settled = (callId: string) =>
    eventually(async () => {
      const status = await callStatus(h, callId);
      return status.state === 'finished' && status.nextStep === null ? portalCall(callId) : undefined;
    });
  /** The CDR's end: missed (billsec 0), no recording. */
  const cdrEnd = (callId: string) => ended(callId, { status: 'missed', durationSec: 0 });
  /** The event socket's hang-up: answered, with the recording file. */
  const socketEnd = (callId: string) =>
    ended(callId, { durationSec: 1, recordingUrl: `https://pbx.example.com/rec/${callId}.wav` });

  it('before the finish went out: the answer and the recording are merged; a repeat is a duplicate', async () => {
    const callId = `second-end-${Date.now()}`;
    // The portal answers nothing for now, so the finish cannot go out before the second end arrives.
    await injectFault(h.sandbox, { kind: 'outage' });
    expect((await post([started(callId), cdrEnd(callId)])).body).toEqual({ accepted: 2, duplicates: 0 });
    expect((await post([socketEnd(callId)])).body).toEqual({ accepted: 1, duplicates: 0 });
    expect((await post([socketEnd(callId), cdrEnd(callId)])).body).toEqual({ accepted: 0, duplicates: 2 });
    await clearFaults(h.sandbox);

    const call = await settled(callId);
    expect(call.finished).toMatchObject({ DURATION: 1, STATUS_CODE: '200' });
    expect(call.records).toEqual([
      expect.objectContaining({ RECORD_URL: `https://pbx.example.com/rec/${callId}.wav`, via: 'url' }),
    ]);
    expect((await callStatus(h, callId)).recording).toBe('attached');
  });

  it('after a missed finish went out: the answer cannot undo it, the recording still attaches', async () => {
    const callId = `second-end-late-${Date.now()}`;
    await post([started(callId), cdrEnd(callId)]);
    expect((await settled(callId)).finished).toMatchObject({ DURATION: 0, STATUS_CODE: '304' });

    expect((await post([socketEnd(callId)])).body).toEqual({ accepted: 1, duplicates: 0 });
    const call = await eventually(async () =>
      (await callStatus(h, callId)).recording === 'attached' ? portalCall(callId) : undefined,
    );
    expect(call.finished).toMatchObject({ STATUS_CODE: '304' });
    expect(call.records).toHaveLength(1);
    // Only the answer is new now, and it can no longer change the portal: a duplicate.
    const answerOnly = ended(callId, { durationSec: 1 });
    expect((await post([answerOnly, socketEnd(callId)])).body).toEqual({ accepted: 0, duplicates: 2 });
  });
});
