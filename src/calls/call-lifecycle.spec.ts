import { CallEvent } from './call';
import { applyEvent, markFinished, markRegistered, newCall, secondsBefore } from './call-lifecycle';

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
    expect(call).toMatchObject({ nextStep: 'register', state: 'queued', show: true, dueAt: 1000 });
  });

  it('register, then finish, then nothing', () => {
    let call = applyEvent(newCall('p', 'c1', 0), started, settings);
    call = applyEvent(call, ended, settings);
    expect(call.nextStep).toBe('register');
    call = markRegistered(call, { portalCallId: 'externalCall.1' }, 2000);
    expect(call).toMatchObject({ nextStep: 'finish', state: 'registered' });
    call = markFinished(call, 3000);
    expect(call).toMatchObject({ nextStep: undefined, state: 'finished', dueAt: undefined });
  });

  it('an ended call without party details waits for its start, then registers without popping', () => {
    let call = applyEvent(newCall('p', 'c1', 0), ended, settings);
    expect(call).toMatchObject({ nextStep: 'wait-start', dueAt: 61_000 });
    call = applyEvent(call, started, settings);
    expect(call).toMatchObject({ nextStep: 'register', show: false, startedAt: started.at });
  });

  it('a CDR starts at `at` minus the duration, keeping the offset', () => {
    const call = applyEvent(
      newCall('p', 'c1', 0),
      { ...ended, direction: 'outbound', phoneNumber: '+4930123' },
      settings,
    );
    expect(call).toMatchObject({ nextStep: 'register', show: false, startedAt: '2026-11-22T10:00:06+01:00' });
  });

  it('secondsBefore keeps offsets and Z', () => {
    expect(secondsBefore('2026-11-22T00:00:30-05:00', 60)).toBe('2026-11-21T23:59:30-05:00');
    expect(secondsBefore('2026-11-22T00:00:30Z', 30)).toBe('2026-11-22T00:00:00Z');
  });
});
