import { CallRecord } from '../calls/call';
import { newCall, plan } from '../calls/call-lifecycle';
import { BatchPlan } from './batch-plan';

function call(callId: string, nextStep: 'register' | 'finish', extra: Partial<CallRecord> = {}): CallRecord {
  const base = {
    ...newCall('p', callId, 0),
    direction: 'inbound' as const,
    phoneNumber: '+4930123',
    startedAt: '2026-11-22T10:00:00+01:00',
    ended: {
      at: '2026-11-22T10:01:00+01:00',
      durationSec: 60,
      status: 'answered' as const,
      recordingUrl: 'https://pbx/rec.mp3',
    },
    portalCallId: nextStep === 'finish' ? 'externalCall.1' : undefined,
    ...extra,
  };
  return plan(base, 0);
}

const steps = (batch: BatchPlan) => batch.entries.map((entry) => entry.commands.map((c) => c.step));

describe('BatchPlan', () => {
  it('with room for one command, a finish goes alone and its recording follows later', () => {
    const batch = new BatchPlan(1);
    expect(batch.add(call('a', 'finish'))).toBe(true);
    expect(steps(batch)).toEqual([['finish']]);
    expect(batch.add(call('b', 'register'))).toBe(false);
  });

  it('fills the last slot with the finish and keeps finish + attachRecord together where they fit', () => {
    const batch = new BatchPlan(3);
    batch.add(call('a', 'finish'));
    batch.add(call('b', 'finish'));
    expect(steps(batch)).toEqual([['finish', 'attachRecord'], ['finish']]);
    expect(batch.commandCount).toBe(3);
  });

  it('a suspect caps the request it joins; later calls that fit still join', () => {
    const batch = new BatchPlan(50);
    batch.add(call('a', 'register'));
    batch.add(call('b', 'register'));
    expect(batch.add(call('suspect', 'register', { batchLimit: 2 }))).toBe(false);
    expect(batch.add(call('c', 'register'))).toBe(true);

    const capped = new BatchPlan(50);
    capped.add(call('suspect', 'finish', { batchLimit: 1 }));
    expect(steps(capped)).toEqual([['finish']]);
    expect(capped.add(call('d', 'register'))).toBe(false);
  });

  it('only() keeps the planned commands and labels of the calls still to send', () => {
    const batch = new BatchPlan(50);
    batch.add(call('a', 'register'));
    batch.add(call('b', 'finish'));
    const kept = batch.only(new Set(['b']));
    expect(kept.entries).toEqual([
      {
        callId: 'b',
        commands: [
          { step: 'finish', label: 'finish_1' },
          { step: 'attachRecord', label: 'attachRecord_1' },
        ],
      },
    ]);
    expect(kept.commandCount).toBe(2);
  });
});
