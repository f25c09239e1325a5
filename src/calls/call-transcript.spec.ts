import { CallPatch, CallRecord, patchCall, RecordingUpload } from './call';
import { newCall, plan } from './call-lifecycle';
import {
  channelSides,
  messagesFromSegments,
  transcribed,
  transcribing,
  withTranscriptDue,
} from './call-transcript';
import { planBatch, STEP_KINDS } from './step-planner';

const held: RecordingUpload = { source: 'push', bytes: 3000, filename: 'r.wav', upload: 'content' };

/** An answered call finished on the portal, its held recording attached. */
function attached(callId: string, extra: CallPatch = {}): CallRecord {
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
  return plan(patchCall(call, extra), 0);
}

const message = { SIDE: 'Client' as const, START_TIME: 0, STOP_TIME: 2, MESSAGE: 'hello' };

describe('transcript messages from the service segments', () => {
  it('are whole seconds: start down, stop up, stop at least 1 and at least the start', () => {
    expect(
      messagesFromSegments([
        {
          side: 'Client',
          segments: [
            { start: 0.2, end: 0.4, text: ' hi ' },
            { start: 3.7, end: 5.01, text: 'there' },
            { start: 9.9, end: 9.2, text: 'late' },
          ],
        },
      ]),
    ).toEqual([
      { SIDE: 'Client', START_TIME: 0, STOP_TIME: 1, MESSAGE: 'hi' },
      { SIDE: 'Client', START_TIME: 3, STOP_TIME: 6, MESSAGE: 'there' },
      { SIDE: 'Client', START_TIME: 9, STOP_TIME: 10, MESSAGE: 'late' },
    ]);
  });

  it('drop blank segments and interleave both channels by start time', () => {
    const messages = messagesFromSegments([
      {
        side: 'Client',
        segments: [
          { start: 1, end: 2, text: 'one' },
          { start: 6, end: 7, text: ' ' },
        ],
      },
      {
        side: 'User',
        segments: [
          { start: 0, end: 1, text: 'zero' },
          { start: 4, end: 5, text: 'four' },
        ],
      },
    ]);
    expect(messages.map((m) => `${m.SIDE}@${m.START_TIME}:${m.MESSAGE}`)).toEqual([
      'User@0:zero',
      'Client@1:one',
      'User@4:four',
    ]);
  });
});

describe('transcript sides', () => {
  it('the first channel is the caller: the outside party inbound, the employee outbound', () => {
    expect(channelSides(2, 'inbound', 'caller')).toEqual(['Client', 'User']);
    expect(channelSides(2, 'outbound', 'caller')).toEqual(['User', 'Client']);
  });

  it('TRANSCRIBE_FIRST_CHANNEL=callee turns them round; one channel is all Client', () => {
    expect(channelSides(2, 'inbound', 'callee')).toEqual(['User', 'Client']);
    expect(channelSides(2, 'outbound', 'callee')).toEqual(['Client', 'User']);
    expect(channelSides(1, 'outbound', 'caller')).toEqual(['Client']);
  });
});

describe('the transcript step', () => {
  it('starts only for an answered call whose recording the bridge held', () => {
    expect(withTranscriptDue(attached('a')).transcript).toEqual({ state: 'pending' });
    const url = attached('b', { recording: { file: undefined } });
    expect(withTranscriptDue(url).transcript).toBeUndefined();
    const missed = attached('c', { party: { ended: { at: 'x', durationSec: 0, status: 'missed' } } });
    expect(withTranscriptDue(missed).transcript).toBeUndefined();
  });

  it('asks the service, then attaches the stored messages, and after a lost answer looks first', () => {
    const due = plan(withTranscriptDue(attached('a')), 0);
    expect(due.delivery.nextStep).toBe('transcribe');
    const asking = plan(transcribing(due, 5000, 0), 0);
    expect(asking.delivery).toMatchObject({ nextStep: 'transcribe', dueAt: 5000 });
    const done = plan(transcribed(asking, [message]), 1);
    expect(done.delivery).toMatchObject({ nextStep: 'attachTranscription', dueAt: 1, state: 'finished' });
    expect(STEP_KINDS.attachTranscription.params(done)).toEqual({
      CALL_ID: 'externalCall.a',
      MESSAGES: [message],
    });
    const sent = plan(patchCall(done, { transcript: { sends: 1 } }), 1);
    expect(sent.delivery.nextStep).toBe('findTranscript');
    expect(STEP_KINDS.findTranscript.params(sent)).toEqual({ FILTER: { CALL_ID: 'externalCall.a' } });
  });

  it('a recording without speech is none, and nothing goes to the portal', () => {
    const none = plan(transcribed(plan(withTranscriptDue(attached('a')), 0), []), 0);
    expect(none.transcript?.state).toBe('none');
    expect(none.delivery.nextStep).toBeUndefined();
  });

  it('goes last: behind a ringing register, a finish, a recording and a task', () => {
    const transcript = plan(
      patchCall(attached('t'), { transcript: { state: 'pending', messages: [message] } }),
      0,
    );
    const recording = attached('r', { recording: { attached: false } });
    const ringing = plan(
      patchCall(newCall('p', 'ring', 0), {
        party: { direction: 'inbound', phoneNumber: '+4930999', startedAt: 'x', heardRinging: true },
      }),
      0,
    );
    const { plan: batch } = planBatch([transcript, recording, ringing], { maxCommands: 2 });
    expect(batch.entries.map((entry) => entry.commands.map((c) => c.step))).toEqual([
      ['register'],
      ['uploadRecord'],
    ]);
    expect(planBatch([transcript], { maxCommands: 2 }).plan.entries[0].commands[0].step).toBe(
      'attachTranscription',
    );
  });

  it('the service calls are the bridge’s own work, never a portal command', () => {
    const due = plan(withTranscriptDue(attached('a')), 0);
    const proposal = planBatch([due], { maxCommands: 10 });
    expect(proposal.transcribes).toEqual(['a']);
    expect(proposal.plan.commandCount).toBe(0);
  });
});
