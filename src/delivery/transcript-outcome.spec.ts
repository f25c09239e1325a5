import { CallRecord, patchCall, RecordingUpload } from '../calls/call';
import { newCall, plan } from '../calls/call-lifecycle';
import {
  foundTranscriptId,
  transcribing,
  transcriptRetry,
  withTranscriptDue,
} from '../calls/call-transcript';
import { PortalError } from '../portal/portal-error';
import { applyAnswers } from './delivery-outcome';

const held: RecordingUpload = { source: 'push', bytes: 3000, filename: 'r.wav', upload: 'content' };

/** An answered inbound call finished on the portal, its held recording attached. */
function attached(callId: string): CallRecord {
  const call = patchCall(newCall('p', callId, 0), {
    party: {
      direction: 'inbound',
      phoneNumber: '+4930123',
      startedAt: '2026-11-22T10:00:00+01:00',
      ended: { at: '2026-11-22T10:01:00+01:00', durationSec: 60, status: 'answered' },
    },
    portal: { callId: `externalCall.${callId}`, finished: true },
    recording: { file: held, attached: true },
  });
  return plan(call, 0);
}

const settings = { now: 1000, maxBackoffMs: 60_000, maxAttempts: 3 };
const message = { SIDE: 'Client' as const, START_TIME: 0, STOP_TIME: 2, MESSAGE: 'hello' };

describe('transcript answers', () => {
  const ready = () =>
    plan(patchCall(attached('a'), { transcript: { state: 'pending', messages: [message], sends: 1 } }), 0);
  const commands = [{ label: 'l', step: 'attachTranscription' as const }];

  it('an attach keeps the TRANSCRIPT_ID and ends the call’s history', () => {
    const done = applyAnswers(
      ready(),
      commands,
      new Map([['l', { result: { TRANSCRIPT_ID: 7 } }]]),
      settings,
    );
    expect(done.transcript).toMatchObject({ state: 'attached', id: 7 });
    expect(done.delivery.nextStep).toBeUndefined();
  });

  it('a look that finds the lost attach’s transcript keeps its id; one that finds none attaches again', () => {
    const look = [{ label: 'l', step: 'findTranscript' as const }];
    const row = { CALL_ID: 'externalCall.a', TRANSCRIPT_ID: '9' };
    const found = applyAnswers(ready(), look, new Map([['l', { result: [row] }]]), settings);
    expect(found.transcript).toMatchObject({ state: 'attached', id: 9 });
    const empty = { CALL_ID: 'externalCall.a', TRANSCRIPT_ID: null };
    const none = applyAnswers(ready(), look, new Map([['l', { result: [empty] }]]), settings);
    expect(none.delivery.nextStep).toBe('attachTranscription');
    expect(foundTranscriptId(ready(), [{ CALL_ID: 'other', TRANSCRIPT_ID: '3' }])).toBeUndefined();
  });

  it('a refused attach is retried up to DELIVERY_MAX_ATTEMPTS, then failed; the call stays finished', () => {
    const error = new PortalError('invalid', 'ERROR_CORE', 'MESSAGES should be an array');
    let call = ready();
    for (let i = 0; i < 3; i += 1) call = applyAnswers(call, commands, new Map([['l', { error }]]), settings);
    expect(call.transcript?.state).toBe('failed');
    expect(call.delivery.state).toBe('finished');
    expect(call.delivery.lastError).toContain('MESSAGES should be an array');
  });

  it('a service that stays down is retried until TRANSCRIBE_WAIT_SEC, Retry-After honoured', () => {
    const asking = transcribing(plan(withTranscriptDue(attached('a')), 0), 900_000, 0);
    const again = transcriptRetry(asking, 'the service answered HTTP 429', 1000, 60_000, 30_000);
    expect(again.delivery.retryAt).toBe(31_000);
    expect(again.transcript?.state).toBe('pending');
    const late = transcriptRetry(again, 'the service answered HTTP 503', 60_000, 60_000);
    expect(late.transcript?.state).toBe('failed');
    expect(late.delivery.lastError).toMatch(/HTTP 503; not done within TRANSCRIBE_WAIT_SEC/);
  });
});

describe('a recording upload answered', () => {
  it('starts the transcript only where transcripts are on', () => {
    const uploading = plan(patchCall(attached('a'), { recording: { attached: false } }), 0);
    const commands = [{ label: 'u', step: 'uploadRecord' as const }];
    const answers = new Map([['u', { result: true }]]);
    const on = applyAnswers(uploading, commands, answers, { ...settings, transcribe: true });
    expect(on.transcript).toEqual({ state: 'pending' });
    expect(on.delivery.nextStep).toBe('transcribe');
    const off = applyAnswers(uploading, commands, answers, settings);
    expect(off.transcript).toBeUndefined();
    expect(off.delivery.nextStep).toBeUndefined();
  });
});
