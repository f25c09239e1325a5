import { CallPatch, CallRecord, patchCall, RecordingUpload } from './call';
import {
  applyEvent,
  markRecordingNotReady,
  markRecordingStored,
  newCall,
  plan,
  recordingStep,
} from './call-lifecycle';
import { BatchPlan, planBatch } from './step-planner';

/** A call finished on the portal whose recording the bridge holds (or still has to download). */
function finished(callId: string, file?: RecordingUpload, extra: CallPatch = {}): CallRecord {
  const call = patchCall(newCall('p', callId, 0), {
    party: {
      direction: 'inbound',
      phoneNumber: '+4930123',
      startedAt: '2026-11-22T10:00:00+01:00',
      ended: {
        at: '2026-11-22T10:01:00+01:00',
        durationSec: 60,
        status: 'answered',
        recordingUrl: 'http://pbx/r.wav',
      },
    },
    portal: { callId: `externalCall.${callId}`, finished: true },
    recording: { file },
  });
  return plan(patchCall(call, extra), 0);
}

const held = (wireBytes: number, upload: 'content' | 'url' = 'content'): RecordingUpload => ({
  source: 'push',
  bytes: Math.floor((wireBytes * 3) / 4),
  filename: 'r.wav',
  upload,
  wireBytes,
});

describe('recording steps', () => {
  it('are due after finish: RECORD_URL, a download, or the upload of what the store holds', () => {
    expect(finished('a').delivery.nextStep).toBe('attachRecord');
    expect(finished('b', { source: 'fetch', fetchUntil: 10 }).delivery.nextStep).toBe('fetchRecord');
    expect(finished('c', held(100)).delivery.nextStep).toBe('uploadRecord');
    expect(
      recordingStep(finished('d', held(100), { party: { ended: undefined }, portal: { finished: false } })),
    ).toBeUndefined();
    expect(finished('e', held(100), { recording: { attached: true } }).delivery.nextStep).toBeUndefined();
  });

  it('a recordingUrl on an allowed host is downloaded; others stay RECORD_URL', () => {
    const settings = {
      now: 1000,
      holdEndedWithoutStartMs: 0,
      recordingFetch: { fetchable: (url: string) => url.startsWith('http://pbx/'), waitMs: 900_000 },
    };
    const event = {
      event: 'call.ended' as const,
      callId: 'x',
      at: '2026-11-22T10:01:00+01:00',
      durationSec: 1,
    };
    const fetched = applyEvent(
      newCall('p', 'x', 0),
      { ...event, recordingUrl: 'http://pbx/r.wav' },
      settings,
    );
    expect(fetched.recording.file).toEqual({ source: 'fetch', fetchUntil: 901_000 });
    const passed = applyEvent(
      newCall('p', 'y', 0),
      { ...event, recordingUrl: 'https://cdn/r.wav' },
      settings,
    );
    expect(passed.recording.file).toBeUndefined();
  });

  it('a pushed file wins over a download and replaces a recording already attached', () => {
    const call = finished('a', { source: 'fetch', fetchUntil: 10 }, { recording: { attached: true } });
    const pushed = markRecordingStored(
      call,
      'push',
      { bytes: 3, filename: 'a.wav', upload: 'content', wireBytes: 4 },
      5,
    );
    expect(pushed.recording.file).toEqual({
      source: 'push',
      bytes: 3,
      filename: 'a.wav',
      upload: 'content',
      wireBytes: 4,
      storedAt: 5,
    });
    expect(pushed.delivery.nextStep).toBe('uploadRecord');
  });

  it('a file not there yet is retried with backoff until the wait ends, then given up with the reason', () => {
    const call = finished('a', { source: 'fetch', fetchUntil: 10_000 });
    const first = markRecordingNotReady(call, 'HTTP 404', 0, 60_000);
    expect(first).toMatchObject({
      delivery: { nextStep: 'fetchRecord', dueAt: 1000, lastError: 'recording: HTTP 404 (retrying)' },
    });
    const second = markRecordingNotReady(first, 'HTTP 404', 1000, 60_000);
    expect(second.delivery.dueAt).toBe(3000);
    const late = markRecordingNotReady(second, 'HTTP 404', 9000, 60_000);
    expect(late.delivery.dueAt).toBe(10_000);
    const over = markRecordingNotReady(late, 'HTTP 404', 10_000, 60_000);
    expect(over).toMatchObject({
      recording: { failed: true },
      delivery: { state: 'finished', nextStep: undefined },
    });
    expect(over.delivery.lastError).toMatch(/RECORDING_WAIT_SEC/);
  });
});

describe('packing recordings by bytes', () => {
  const steps = (batch: BatchPlan) => batch.entries.map((entry) => entry.callId);

  it('puts files in one request while their content stays under the cap', () => {
    const batch = new BatchPlan(50, { maxPayloadBytes: 1000 });
    expect(batch.add(finished('a', held(400)))).toBe(true);
    expect(batch.add(finished('b', held(500)))).toBe(true);
    expect(batch.add(finished('c', held(200)))).toBe(false);
    expect(batch.payloadByteCount).toBe(900);
    // Other commands still fit: the cap counts file content only.
    expect(batch.add(finished('d'))).toBe(true);
    expect(steps(batch)).toEqual(['a', 'b', 'd']);
  });

  it('lets a later smaller file take the room a big one left', () => {
    const { plan: batch } = planBatch(
      [finished('a', held(700)), finished('b', held(700)), finished('c', held(300))],
      {
        maxCommands: 50,
        maxPayloadBytes: 1000,
      },
    );
    expect(steps(batch)).toEqual(['a', 'c']);
    expect(batch.payloadByteCount).toBe(1000);
  });

  it('counts nothing for a file that goes through uploadUrl, and a file alone in a request always goes', () => {
    const batch = new BatchPlan(50, { maxPayloadBytes: 1000 });
    expect(batch.add(finished('big', held(5000, 'url')))).toBe(true);
    expect(batch.payloadByteCount).toBe(0);
    const alone = new BatchPlan(50, { maxPayloadBytes: 1000 });
    expect(alone.add(finished('odd', held(1200)))).toBe(true);
  });

  it('keeps the byte count when the plan is narrowed, and lists downloads apart from commands', () => {
    const { plan: batch, fetches } = planBatch(
      [finished('a', held(400)), finished('b', held(300)), finished('f', { source: 'fetch', fetchUntil: 1 })],
      { maxCommands: 50, maxPayloadBytes: 1000 },
    );
    expect(fetches).toEqual(['f']);
    expect(batch.only(new Map([['b', ['uploadRecord']]])).payloadByteCount).toBe(300);
  });

  it('sends CALL_ID and FILENAME; the content is added right before sending', () => {
    const batch = new BatchPlan(50);
    const call = finished('a', held(400));
    batch.add(call);
    expect(batch.commands(new Map([['a', call]]))).toEqual([
      {
        label: 'uploadRecord_0',
        method: 'telephony.externalcall.attachRecord',
        params: { CALL_ID: 'externalCall.a', FILENAME: 'r.wav' },
      },
    ]);
  });
});
