import { CallPatch, CallRecord, patchCall, PortalStep } from './call';
import { newCall, plan } from './call-lifecycle';
import { BatchPlan, commandBytes, dueSteps, planBatch, STEP_KINDS } from './step-planner';

function call(callId: string, nextStep: 'register' | 'finish', extra: CallPatch = {}): CallRecord {
  const base = patchCall(newCall('p', callId, 0), {
    party: {
      direction: 'inbound' as const,
      phoneNumber: '+4930123',
      startedAt: '2026-11-22T10:00:00+01:00',
      ended: {
        at: '2026-11-22T10:01:00+01:00',
        durationSec: 60,
        status: 'answered' as const,
        recordingUrl: 'https://pbx/rec.mp3',
      },
    },
    portal: { callId: nextStep === 'finish' ? 'externalCall.1' : undefined },
  });
  return plan(patchCall(base, extra), 0);
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
    expect(batch.add(call('suspect', 'register', { delivery: { batchLimit: 2 } }))).toBe(false);
    expect(batch.add(call('c', 'register'))).toBe(true);

    const capped = new BatchPlan(50);
    capped.add(call('suspect', 'finish', { delivery: { batchLimit: 1 } }));
    expect(steps(capped)).toEqual([['finish']]);
    expect(capped.add(call('d', 'register'))).toBe(false);
  });

  it('only() keeps the planned commands and labels of the calls still to send', () => {
    const batch = new BatchPlan(50);
    batch.add(call('a', 'register'));
    batch.add(call('b', 'finish'));
    const kept = batch.only(new Map([['b', ['finish', 'attachRecord'] as PortalStep[]]]));
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

  it('register and finish of one call never share a request, even with room to spare', () => {
    const registered = call('a', 'register');
    expect(dueSteps(registered)).toEqual(['register']);
    const batch = new BatchPlan(50);
    batch.add(registered);
    expect(steps(batch)).toEqual([['register']]);
  });

  it('packs by bytes: a call whose commands would pass the cap waits, a smaller later one joins', () => {
    const a = call('a', 'finish');
    const b = call('b', 'register', { party: { phoneNumber: '+493012345678901234567890' } });
    const small = call('c', 'register');
    const sizeOf = (c: CallRecord, step: 'finish' | 'attachRecord' | 'register', index: number) =>
      commandBytes(`${step}_${index}`, STEP_KINDS[step].method, STEP_KINDS[step].params(c));
    const first = sizeOf(a, 'finish', 0) + sizeOf(a, 'attachRecord', 0);
    const maxBytes = first + sizeOf(small, 'register', 1);
    const batch = new BatchPlan(50, { maxBytes });
    expect(batch.add(a)).toBe(true);
    expect(batch.add(b)).toBe(false);
    expect(batch.add(small)).toBe(true);
    expect(batch.byteCount).toBe(maxBytes);
    expect(steps(batch)).toEqual([['finish', 'attachRecord'], ['register']]);
  });

  it('packs by bytes within a call: a finish fits alone where its attachRecord does not', () => {
    const a = call('a', 'finish');
    const finishOnly = commandBytes('finish_0', STEP_KINDS.finish.method, STEP_KINDS.finish.params(a));
    const batch = new BatchPlan(50, { maxBytes: finishOnly + 1 });
    batch.add(a);
    expect(steps(batch)).toEqual([['finish']]);
  });

  it('a command over the byte cap on its own still goes, alone', () => {
    const batch = new BatchPlan(50, { maxBytes: 10 });
    expect(batch.add(call('a', 'finish'))).toBe(true);
    expect(steps(batch)).toEqual([['finish']]);
    expect(batch.add(call('b', 'register'))).toBe(false);
  });

  it('the default byte cap changes nothing at 50 commands of today’s size', () => {
    const due = Array.from({ length: 50 }, (_, i) => call(`c${i}`, i % 2 ? 'finish' : 'register'));
    const { plan: batch } = planBatch(due, { maxCommands: 50 });
    expect(batch.commandCount).toBe(50);
    expect(batch.byteCount).toBeLessThan(100_000);
  });

  it('an operating-time allowance caps each method on its own; a call whose step has none waits', () => {
    const room: Record<string, number> = {
      'telephony.externalcall.register': 1,
      'telephony.externalcall.finish': 2,
      'telephony.externalcall.attachRecord': 1,
    };
    const asked: string[] = [];
    const { plan: batch } = planBatch(
      [
        call('r1', 'register'),
        call('r2', 'register'),
        call('f1', 'finish'),
        call('f2', 'finish'),
        call('f3', 'finish'),
      ],
      {
        maxCommands: 50,
        allowance: (method) => {
          asked.push(method);
          return room[method];
        },
      },
    );
    // One register, two finishes, one recording (the second finish goes without its attachRecord).
    expect(batch.callIds).toEqual(['r1', 'f1', 'f2']);
    expect(steps(batch)).toEqual([['register'], ['finish', 'attachRecord'], ['finish']]);
    expect(batch.commandsByMethod()).toEqual(
      new Map([
        ['telephony.externalcall.register', 1],
        ['telephony.externalcall.finish', 2],
        ['telephony.externalcall.attachRecord', 1],
      ]),
    );
    expect(batch.exhaustedMethods().sort()).toEqual(Object.keys(room).sort());
    // Each method's allowance is asked once per plan.
    expect(asked.sort()).toEqual(Object.keys(room).sort());
  });

  it('with no allowance for any due method the plan is empty and names the methods that wait', () => {
    const { plan: batch } = planBatch([call('r1', 'register')], { maxCommands: 50, allowance: () => 0 });
    expect(batch.commandCount).toBe(0);
    expect(batch.exhaustedMethods()).toEqual(['telephony.externalcall.register']);
  });

  it('hide goes as one command with the card user', () => {
    const hidden: CallRecord = patchCall(call('h', 'finish'), {
      card: { userIds: [7] },
      delivery: { nextStep: 'hide', failed: true },
    });
    const batch = new BatchPlan(50);
    batch.add(hidden);
    expect(steps(batch)).toEqual([['hide']]);
    expect(batch.commands(new Map([['h', hidden]]))).toEqual([
      {
        label: 'hide_0',
        method: 'telephony.externalcall.hide',
        params: { CALL_ID: 'externalCall.1', USER_ID: [7] },
      },
    ]);
  });

  it('builds wire commands from the step table, from the calls as stored before sending', () => {
    const a = call('a', 'register');
    const batch = new BatchPlan(50);
    batch.add(a);
    const marked = { ...a, portal: { ...a.portal, user: { USER_PHONE_INNER: '101' } } };
    const [command] = batch.commands(new Map([['a', marked]]));
    expect(command).toMatchObject({
      label: 'register_0',
      method: 'telephony.externalcall.register',
      params: { USER_PHONE_INNER: '101', EXTERNAL_CALL_ID: 'a', CRM_CREATE: 1 },
    });
  });

  describe('planBatch', () => {
    it('lists due held calls for parking and plans the rest in the store’s order', () => {
      const held = patchCall(call('held', 'register'), { delivery: { nextStep: 'wait-start' as const } });
      const { plan: batch, expiredHolds } = planBatch([call('a', 'finish'), held, call('b', 'register')], {
        maxCommands: 50,
      });
      expect(expiredHolds).toEqual(['held']);
      expect(batch.callIds).toEqual(['a', 'b']);
    });

    it('packs higher priority classes first when not all fit', () => {
      const kinds = { ...STEP_KINDS, register: { ...STEP_KINDS.register, priority: 0 } };
      const due = [
        call('f1', 'finish'),
        call('r1', 'register'),
        call('f2', 'finish'),
        call('r2', 'register'),
      ];
      const { plan: batch } = planBatch(due, { maxCommands: 3, kinds });
      expect(batch.callIds).toEqual(['r1', 'r2', 'f1']);
      expect(steps(batch)).toEqual([['register'], ['register'], ['finish']]);

      const { plan: same } = planBatch(due, { maxCommands: 3 });
      expect(same.callIds).toEqual(['f1', 'r1']);
    });

    it('a suspect’s batchLimit caps the request it joins', () => {
      const due = [
        call('a', 'register'),
        call('s', 'register', { delivery: { batchLimit: 1 } }),
        call('b', 'register'),
      ];
      const { plan: batch } = planBatch(due, { maxCommands: 50 });
      expect(batch.callIds).toEqual(['a', 'b']);
      const { plan: alone } = planBatch([due[1], due[0]], { maxCommands: 50 });
      expect(alone.callIds).toEqual(['s']);
    });
  });
});
