import { CallEvent, idempotencyKey } from './call';
import {
  applyEvent,
  countSent,
  markCardHidden,
  markFinished,
  markFinishFailed,
  markHoldExpired,
  markRegistered,
  newCall,
  requeue,
  secondsBefore,
} from './call-lifecycle';

const settings = { now: 1000, holdEndedWithoutStartMs: 60_000 };
const started: CallEvent = {
  event: 'call.started',
  callId: 'c1',
  direction: 'inbound',
  phoneNumber: '+4915112345678',
  extension: '101',
  at: '2026-11-22T10:00:00+01:00',
};
const ended: CallEvent = {
  event: 'call.ended',
  callId: 'c1',
  at: '2026-11-22T10:02:07+01:00',
  durationSec: 121,
  status: 'answered',
};

describe('call lifecycle', () => {
  it('a started call is due for register and pops the card', () => {
    const call = applyEvent(newCall('p', 'c1', 0), started, settings);
    expect(call).toMatchObject({
      party: { heardRinging: true },
      delivery: { nextStep: 'register', state: 'queued', dueAt: 1000 },
    });
  });

  it('register, then finish, then nothing', () => {
    let call = applyEvent(newCall('p', 'c1', 0), started, settings);
    call = applyEvent(call, ended, settings);
    expect(call.delivery.nextStep).toBe('register');
    call = markRegistered(call, { callId: 'externalCall.1' }, 2000);
    expect(call).toMatchObject({ delivery: { nextStep: 'finish', state: 'registered' } });
    call = markFinished(call, 3000);
    expect(call).toMatchObject({ delivery: { nextStep: undefined, state: 'finished', dueAt: undefined } });
  });

  it('an ended call without party details waits for its start, then registers without popping', () => {
    let call = applyEvent(newCall('p', 'c1', 0), ended, settings);
    expect(call).toMatchObject({ delivery: { nextStep: 'wait-start', dueAt: 61_000 } });
    call = applyEvent(call, started, settings);
    expect(call).toMatchObject({
      party: { heardRinging: false, startedAt: started.at },
      delivery: { nextStep: 'register' },
    });
  });

  it('a CDR starts at `at` minus the duration, keeping the offset', () => {
    const call = applyEvent(
      newCall('p', 'c1', 0),
      { ...ended, direction: 'outbound', phoneNumber: '+4930123' },
      settings,
    );
    expect(call).toMatchObject({
      party: { heardRinging: false, startedAt: '2026-11-22T10:00:06+01:00' },
      delivery: { nextStep: 'register' },
    });
  });

  it('a call.started after the hold expired brings the parked call back to register', () => {
    let call = applyEvent(newCall('p', 'c1', 0), ended, settings);
    call = markHoldExpired(call, 'no call.started within the hold', 61_000);
    expect(call).toMatchObject({ delivery: { state: 'failed', nextStep: undefined } });
    call = applyEvent(call, started, { ...settings, now: 70_000 });
    expect(call).toMatchObject({
      party: { heardRinging: false },
      delivery: { state: 'queued', nextStep: 'register', failed: false },
    });
    expect(call.delivery.lastError).toBeUndefined();
  });

  it('a call failed for another reason stays failed when a start arrives', () => {
    let call = applyEvent(newCall('p', 'c1', 0), ended, settings);
    call = { ...call, delivery: { ...call.delivery, failed: true, lastError: 'register: refused' } };
    call = applyEvent(call, started, settings);
    expect(call).toMatchObject({ delivery: { state: 'failed', nextStep: undefined } });
  });

  it('a finish refused for good parks the call and then hides the card that popped', () => {
    let call = applyEvent(newCall('p', 'c1', 0), started, settings);
    call = applyEvent(call, ended, settings);
    call = markRegistered(call, { callId: 'externalCall.1' }, 2000);
    call = markFinishFailed(call, 'finish: refused', 3000);
    expect(call).toMatchObject({
      delivery: { state: 'failed', nextStep: 'hide', dueAt: 3000, lastError: 'finish: refused' },
    });
    call = markCardHidden(call, 4000);
    expect(call).toMatchObject({
      delivery: { state: 'failed', nextStep: undefined, lastError: 'finish: refused' },
    });
  });

  it('a CDR-only call (no card popped) parks without a hide', () => {
    let call = applyEvent(
      newCall('p', 'c1', 0),
      { ...ended, direction: 'inbound', phoneNumber: '+4930123' },
      settings,
    );
    call = markRegistered(call, { callId: 'externalCall.1' }, 2000);
    call = markFinishFailed(call, 'finish: refused', 3000);
    expect(call).toMatchObject({ delivery: { state: 'failed', nextStep: undefined } });
  });

  it('a re-queue counts steps from zero and forgets refusals and suspicion', () => {
    let call = applyEvent(newCall('p', 'c1', 0), started, settings);
    call = applyEvent(call, ended, settings);
    call = markRegistered(countSent(call, ['register']), { callId: 'externalCall.1' }, 2000);
    call = countSent(call, ['finish']);
    call = markFinishFailed(
      { ...call, delivery: { ...call.delivery, refused: { finish: 3 }, batchLimit: 1 } },
      'finish: refused',
      3000,
    );
    call = requeue(call, 5000, 60_000);
    expect(call).toMatchObject({
      delivery: { state: 'registered', nextStep: 'finish', stepsSent: {}, dueAt: 5000 },
    });
    expect(call.delivery.refused).toBeUndefined();
    expect(call.delivery.batchLimit).toBeUndefined();
    expect(call.card.toHide).toBeUndefined();
  });

  it('secondsBefore keeps offsets and Z', () => {
    expect(secondsBefore('2026-11-22T00:00:30-05:00', 60)).toBe('2026-11-21T23:59:30-05:00');
    expect(secondsBefore('2026-11-22T00:00:30Z', 30)).toBe('2026-11-22T00:00:00Z');
  });

  describe('a second call.ended (a CDR and the hang-up event of one call)', () => {
    const missed: CallEvent = { ...ended, status: 'missed', durationSec: 0 };
    const recorded: CallEvent = { ...ended, durationSec: 1, recordingUrl: 'https://pbx/rec/c1.wav' };
    const taskSettings = { ...settings, missedCallTaskDeadlineMs: 3_600_000 };
    const endedMissed = () =>
      applyEvent(applyEvent(newCall('p', 'c1', 0), started, taskSettings), missed, taskSettings);

    it('is keyed by what it adds, and merges it while the finish has not gone out', () => {
      const call = endedMissed();
      expect(call.task).toBeDefined();
      expect(idempotencyKey(recorded, call)).toBe('call.ended/+answered,recording');
      const merged = applyEvent(call, recorded, taskSettings);
      expect(merged.party.ended).toMatchObject({
        status: 'answered',
        durationSec: 1,
        recordingUrl: recorded.recordingUrl,
      });
      expect(merged.task).toBeUndefined();
      expect(idempotencyKey(recorded, merged)).toBe('call.ended');
      expect(idempotencyKey(missed, merged)).toBe('call.ended');
    });

    it('once the finish was sent, only a recording is new; it is attached as usual', () => {
      const call = countSent(markRegistered(endedMissed(), { callId: 'P1' }, 1100), ['finish']);
      expect(idempotencyKey({ ...recorded, recordingUrl: undefined }, call)).toBe('call.ended');
      expect(idempotencyKey(recorded, call)).toBe('call.ended/+recording');
      const merged = applyEvent(markFinished(call, 1200), recorded, taskSettings);
      expect(merged.party.ended).toMatchObject({ status: 'missed', recordingUrl: recorded.recordingUrl });
      expect(merged.delivery.nextStep).toBe('attachRecord');
    });
  });
});
