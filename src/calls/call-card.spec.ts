import { CallEvent, CallRecord, idempotencyKey } from './call';
import { cardMoves, cardViewers, finishKey, popsCard, ringGroupRest, withCardUsers } from './call-card';
import {
  applyEvent,
  deliveryPriority,
  markCardHidden,
  markCardShown,
  markFinished,
  markRegistered,
  newCall,
} from './call-lifecycle';
import { registerParams } from './portal-commands';
import { dueSteps, planBatch } from './step-planner';

const settings = { now: 1000, holdEndedWithoutStartMs: 60_000 };
const group: CallEvent = {
  event: 'call.started',
  callId: 'c1',
  direction: 'inbound',
  phoneNumber: '+4915112345678',
  extensions: ['101', '102', '103'],
  at: '2026-11-22T10:00:00+01:00',
};
const answeredBy = (extension: string): CallEvent => ({
  event: 'call.answered',
  callId: 'c1',
  extension,
  at: '2026-11-22T10:00:09+01:00',
});
const ended: CallEvent = {
  event: 'call.ended',
  callId: 'c1',
  at: '2026-11-22T10:02:07+01:00',
  durationSec: 118,
  status: 'answered',
};

/** What the delivery batch fixes before sending a register with SHOW=1 (its employee, the card maybe open). */
function sentRegister(call: CallRecord): CallRecord {
  return {
    ...call,
    card: { ...call.card, registerKey: '101', maybe: ['101'] },
    portal: { ...call.portal, user: { USER_PHONE_INNER: '101' } },
  };
}

function sentShow(call: CallRecord, keys: string[]): CallRecord {
  const userIds = keys.map((key) => Number(key) - 100);
  return {
    ...call,
    card: {
      ...call.card,
      sending: { ...call.card.sending, show: { keys, userIds } },
      maybe: [...new Set([...(call.card.maybe ?? []), ...keys])],
    },
  };
}

function sentHide(call: CallRecord, keys: string[]): CallRecord {
  return {
    ...call,
    card: { ...call.card, sending: { ...call.card.sending, hide: { keys, userIds: keys.map(Number) } } },
  };
}

describe('call card', () => {
  it('a ring group registers for the first member and shows the rest in the same request, ahead of history', () => {
    const call = applyEvent(newCall('p', 'c1', 0), group, settings);
    expect(call).toMatchObject({
      party: { extension: '101', ringing: ['101', '102', '103'] },
      delivery: { nextStep: 'register' },
    });
    expect(dueSteps(call)).toEqual(['register', 'show']);
    expect(deliveryPriority(call)).toBe(0);
    expect(registerParams(call, {})).toMatchObject({ SHOW: 1 });

    const history = applyEvent(
      newCall('p', 'old', 0),
      { ...ended, callId: 'old', direction: 'inbound', phoneNumber: '+4930123' },
      settings,
    );
    expect(deliveryPriority(history)).toBe(1);
    const { plan } = planBatch(
      [history, history, call].map((c, i) => ({ ...c, callId: `${c.callId}${i}` })),
      {
        maxCommands: 2,
      },
    );
    expect(plan.entries.map((entry) => entry.commands.map((command) => command.step))).toEqual([
      ['register', 'show'],
    ]);
  });

  it('the show rides with the register, taking its CALL_ID from the register answer', () => {
    const call = applyEvent(newCall('p', 'c1', 0), group, settings);
    const { plan } = planBatch([call], { maxCommands: 50 });
    const marked = sentShow(sentRegister(call), ['102', '103']);
    const [, show] = plan.commands(new Map([['c1', marked]]));
    expect(show).toEqual({
      label: 'show_0',
      method: 'telephony.externalcall.show',
      params: { CALL_ID: '$result[register_0][CALL_ID]', USER_ID: [2, 3] },
    });
  });

  it('on answer the others are hidden; a transfer shows the new answerer and hides the previous one', () => {
    let call = applyEvent(newCall('p', 'c1', 0), group, settings);
    call = sentShow(sentRegister(call), ['102', '103']);
    call = markRegistered(call, { callId: 'externalCall.1' }, 2000);
    call = markCardShown(call, 2000);
    expect(call.card.shown?.sort()).toEqual(['101', '102', '103']);
    expect(call.delivery.nextStep).toBeUndefined();

    call = applyEvent(call, answeredBy('102'), { ...settings, now: 3000 });
    expect(cardViewers(call)).toEqual(['102']);
    expect(cardMoves(call)).toEqual({ show: [], hide: ['101', '103'] });
    expect(call).toMatchObject({ delivery: { nextStep: 'hide', dueAt: 3000 } });
    expect(deliveryPriority(call)).toBe(0);
    call = markCardHidden(sentHide(call, ['101', '103']), 3100);
    expect(call.card.shown).toEqual(['102']);
    expect(call.delivery.nextStep).toBeUndefined();

    call = applyEvent(call, answeredBy('103'), { ...settings, now: 4000 });
    expect(cardMoves(call)).toEqual({ show: ['103'], hide: ['102'] });
    expect(dueSteps(call)).toEqual(['show', 'hide']);

    call = markCardHidden(markCardShown(sentHide(sentShow(call, ['103']), ['102']), 4100), 4100);
    expect(call.card.shown).toEqual(['103']);
    call = applyEvent(call, ended, { ...settings, now: 5000 });
    // finish names the last answerer and closes their card: nothing else to hide.
    expect(dueSteps(call)).toEqual(['finish']);
    expect(deliveryPriority(call)).toBe(1);
    call = markFinished(call, 5100);
    expect(call).toMatchObject({ card: { shown: [] }, delivery: { state: 'finished', nextStep: undefined } });
  });

  it('a ring group nobody answered: finish closes the register user card, a hide in the same request the rest', () => {
    let call = applyEvent(newCall('p', 'c1', 0), group, settings);
    call = markCardShown(sentShow(sentRegister(call), ['102', '103']), 2000);
    call = markRegistered(call, { callId: 'externalCall.1' }, 2000);
    call = applyEvent(call, { ...ended, status: 'missed', durationSec: 0 }, { ...settings, now: 3000 });
    expect(dueSteps(call)).toEqual(['finish', 'hide']);
    expect(cardMoves(call).hide.sort()).toEqual(['102', '103']);
  });

  it('a call that ended before its register went out is registered with SHOW=0 and shows nobody', () => {
    let call = applyEvent(newCall('p', 'c1', 0), group, settings);
    call = applyEvent(call, { ...ended, status: 'missed', durationSec: 0 }, settings);
    expect(popsCard(call)).toBe(false);
    expect(registerParams(call, {})).toMatchObject({ SHOW: 0 });
    expect(dueSteps(call)).toEqual(['register']);
    expect(deliveryPriority(call)).toBe(1);
    call = markRegistered(call, { callId: 'externalCall.1' }, 2000);
    expect(dueSteps(call)).toEqual(['finish']);
  });

  it('one employee under two keys is one person once the directory names their user (103 = user:3)', () => {
    const directory = (extension: string) => Number(extension) - 100;
    let call = applyEvent(newCall('p', 'c1', 0), group, settings);
    call = sentShow(sentRegister(call), ['102', '103']);
    call = markCardShown(markRegistered(call, { callId: 'externalCall.1' }, 2000), 2000);
    call = applyEvent(
      call,
      { ...answeredBy('x'), extension: undefined, userId: 3 },
      { ...settings, now: 3000 },
    );
    // Spellings only: user:3 is a stranger to show, and 103 someone to hide.
    expect(cardMoves(call)).toEqual({ show: ['user:3'], hide: ['101', '102', '103'] });

    call = withCardUsers(call, directory);
    expect(call.card.users).toEqual({ '101': 1, '102': 2, '103': 3 });
    expect(withCardUsers(call, directory)).toBe(call);
    expect(cardMoves(call)).toEqual({ show: [], hide: ['101', '102'] });
    call = markCardHidden(sentHide(call, ['101', '102']), 3100);
    expect(call).toMatchObject({ card: { shown: ['103'] }, delivery: { nextStep: undefined } });

    // The same person reporting the answer again by extension moves nothing; finish closes their card.
    call = applyEvent(call, answeredBy('103'), { ...settings, now: 4000 });
    expect(cardMoves(call)).toEqual({ show: [], hide: [] });
    call = applyEvent(
      call,
      { ...answeredBy('x'), extension: undefined, userId: 3 },
      { ...settings, now: 4500 },
    );
    call = applyEvent(call, ended, { ...settings, now: 5000 });
    expect(dueSteps(call)).toEqual(['finish']);
    call = markFinished(call, 5100);
    expect(call).toMatchObject({ card: { shown: [] }, delivery: { nextStep: undefined } });
  });

  it('a ring group naming one employee twice shows them once', () => {
    let call = applyEvent(
      newCall('p', 'c1', 0),
      { ...group, extensions: ['101', '102', '103', '104'] },
      settings,
    );
    call = withCardUsers({ ...call, card: { ...call.card, registerKey: '101' } }, (extension) =>
      extension === '104' ? 3 : 2,
    );
    expect(cardViewers(call)).toEqual(['101', '104']);
    expect(ringGroupRest(call, '101')).toEqual(['104']);
  });

  it('call.answered is keyed by who answered: a repeat is a duplicate, someone else is a transfer', () => {
    expect(idempotencyKey(answeredBy('102'))).toBe('call.answered/102');
    expect(idempotencyKey({ ...answeredBy('102'), extension: undefined, userId: 7 })).toBe(
      'call.answered/user:7',
    );
    expect(idempotencyKey(group)).toBe('call.started');
  });

  describe("phones that start ringing later (a queue's next member, a hunt group, follow-me)", () => {
    const queue: CallEvent = { ...group, extensions: undefined, extension: '101' };
    const later = (extensions: string[]): CallEvent => ({
      ...queue,
      extensions,
      at: '2026-11-22T10:00:15+01:00',
    });

    it('a later start naming a new phone is keyed by it; one naming nobody new keys as the first', () => {
      expect(idempotencyKey(queue, undefined)).toBe('call.started');
      const call = applyEvent(newCall('p', 'c1', 0), queue, settings);
      expect(idempotencyKey(later(['101', '102']), call)).toBe('call.started/+102');
      expect(idempotencyKey(later(['103', '102']), call)).toBe('call.started/+102,103');
      expect(idempotencyKey(later(['101']), call)).toBe('call.started');
      expect(idempotencyKey(queue, call)).toBe('call.started');
      const grown = applyEvent(call, later(['102']), settings);
      expect(idempotencyKey(later(['102']), grown)).toBe('call.started');
      // A key stays within the primary key column however many long numbers a start names.
      const many = later(Array.from({ length: 50 }, (_, i) => `${'9'.repeat(200)}${i}`));
      expect(idempotencyKey(many, call)).toMatch(/^call\.started\/\+sha256:[0-9a-f]{64}$/);
    });

    it('while the call rings, the late phone is shown the card; on the answer it is hidden for the others', () => {
      let call = applyEvent(newCall('p', 'c1', 0), queue, settings);
      call = markRegistered(sentRegister(call), { callId: 'P1' }, 1100);
      expect(call).toMatchObject({ card: { shown: ['101'] }, delivery: { nextStep: undefined } });
      call = applyEvent(call, later(['102']), { ...settings, now: 2000 });
      expect(call).toMatchObject({
        party: { ringing: ['101', '102'], startedAt: queue.at },
        delivery: { nextStep: 'show' },
      });
      expect(cardMoves(call)).toEqual({ show: ['102'], hide: [] });
      expect(deliveryPriority(call)).toBe(0);
      call = markCardShown(
        { ...call, card: { ...call.card, sending: { show: { keys: ['102'], userIds: [3] } } } },
        2100,
      );
      call = applyEvent(call, answeredBy('102'), { ...settings, now: 3000 });
      expect(cardMoves(call)).toEqual({ show: [], hide: ['101'] });
    });

    it('a phone ringing after the answer (a blind transfer) is shown the card until the next answer', () => {
      let call = applyEvent(newCall('p', 'c1', 0), queue, settings);
      call = markRegistered(sentRegister(call), { callId: 'P1' }, 1100);
      call = applyEvent(call, answeredBy('101'), { ...settings, now: 2000 });
      expect(idempotencyKey(later(['103']), call)).toBe('call.started/101/+103');
      call = applyEvent(call, later(['103']), { ...settings, now: 2100 });
      expect(call).toMatchObject({ party: { ringingSinceAnswer: ['103'] }, delivery: { nextStep: 'show' } });
      expect(cardMoves(call)).toEqual({ show: ['103'], hide: [] });
      expect(deliveryPriority(call)).toBe(0);
      // A repeat names nobody new: a duplicate of the first start.
      expect(idempotencyKey(later(['103']), call)).toBe('call.started');
      call = markCardShown(
        { ...call, card: { ...call.card, sending: { show: { keys: ['103'], userIds: [3] } } } },
        2200,
      );
      const taken = applyEvent(call, answeredBy('103'), { ...settings, now: 3000 });
      expect(cardMoves(taken)).toEqual({ show: [], hide: ['101'] });
      const over = applyEvent(call, ended, { ...settings, now: 3000 });
      expect(cardMoves(over)).toEqual({ show: [], hide: ['103'] });
      expect(finishKey(over)).toBe('101');
    });

    it('a late phone of a call already ended is shown nothing', () => {
      let call = applyEvent(newCall('p', 'c1', 0), queue, settings);
      call = markRegistered(sentRegister(call), { callId: 'P1' }, 1100);
      const over = applyEvent(call, ended, { ...settings, now: 2000 });
      const lateAfterEnd = applyEvent(over, later(['102']), { ...settings, now: 2100 });
      expect(cardMoves(lateAfterEnd).show).toEqual([]);
      expect(lateAfterEnd.delivery.nextStep).toBe('finish');
    });

    it("a late phone before the register went out rides with the register's show", () => {
      let call = applyEvent(newCall('p', 'c1', 0), queue, settings);
      call = applyEvent(call, later(['102']), { ...settings, now: 1100 });
      expect(call.delivery.nextStep).toBe('register');
      expect(ringGroupRest(call, '101')).toEqual(['102']);
      expect(dueSteps(call)).toEqual(['register', 'show']);
    });
  });
});
