import { CallEvent, CallRecord } from '../../../src/calls/call';
import { applyEvent, newCall } from '../../../src/calls/call-lifecycle';
import { EventApplier } from '../../../src/store/call-store';
import { LeaseLostError } from '../../../src/store/coordination-store';
import { endedEvent, startedEvent } from '../../support/call-events';
import { TEST_ENGINES } from '../../support/test-database';
import { storesPerTest } from './engines';

const P = 'portal-a';
const Q = 'portal-b';

/** The lifecycle's own applier, on a clock the spec chooses (a call's due time is its last event's `now`). */
const lifecycle =
  (portalId: string, now = Date.now() - 1000): EventApplier =>
  (call, event) =>
    applyEvent(call ?? newCall(portalId, event.callId, now), event, { now, holdEndedWithoutStartMs: 60_000 });

/** The queue (intake, due calls, fenced marks and answers), the same on both engines. */
describe.each(TEST_ENGINES)('call queue (%s)', (_name, engineOf) => {
  const { stores } = storesPerTest(engineOf);
  const calls = () => stores().calls;
  const ingest = (portalId: string, submissions: CallEvent[][], now?: number) =>
    calls().ingest(portalId, submissions, lifecycle(portalId, now));

  it('stores an event once per (call, event): a repeat, in the same batch or later, is a duplicate', async () => {
    expect(
      await ingest(P, [
        [startedEvent('c1'), startedEvent('c1')],
        [startedEvent('c1'), endedEvent('c1')],
      ]),
    ).toEqual([
      { accepted: 1, duplicates: 1 },
      { accepted: 1, duplicates: 1 },
    ]);
    expect(await ingest(P, [[endedEvent('c1')]])).toEqual([{ accepted: 0, duplicates: 1 }]);
    // Another portal's call of the same id is its own.
    expect(await ingest(Q, [[startedEvent('c1')]])).toEqual([{ accepted: 1, duplicates: 0 }]);
    expect(await calls().findCall(P, 'c1')).toMatchObject({
      portalId: P,
      callId: 'c1',
      party: { heardStart: true },
    });
    expect(await calls().findCall(Q, 'c1')).toMatchObject({ portalId: Q, callId: 'c1' });
    expect(await calls().findCall(P, 'unknown')).toBeUndefined();
  });

  it('many intakes at once (group commit): each gets its own answer, a repeat is accepted exactly once', async () => {
    const portals = Array.from({ length: 12 }, (_, i) => `portal-${i}`);
    const answers = await Promise.all(
      portals.flatMap((portalId) => [
        ingest(portalId, [[startedEvent('same')]]),
        ingest(portalId, [[startedEvent('same')]]),
        ingest(portalId, [[startedEvent(`own-${portalId}`)]]),
      ]),
    );
    for (let i = 0; i < portals.length; i++) {
      const [a, b, own] = answers.slice(i * 3, i * 3 + 3);
      expect(a[0].accepted + b[0].accepted).toBe(1);
      expect(a[0].duplicates + b[0].duplicates).toBe(1);
      expect(own).toEqual([{ accepted: 1, duplicates: 0 }]);
    }
    expect(await calls().queueStats('portal-3')).toMatchObject({ depth: 2, failed: 0 });
  });

  it('lists due calls live ones first, then oldest due first, less the skipped and the excepted steps', async () => {
    const now = Date.now();
    await ingest(P, [[startedEvent('old'), endedEvent('old')]], now - 30_000);
    await ingest(P, [[startedEvent('older'), endedEvent('older')]], now - 40_000);
    await ingest(P, [[startedEvent('live')]], now - 10_000);
    await ingest(P, [[startedEvent('later')]], now + 60_000);
    await ingest(Q, [[startedEvent('other')]], now - 50_000);
    const ids = (due: CallRecord[]) => due.map((call) => call.callId);
    expect(ids(await calls().dueCalls(P, now, 10, new Set()))).toEqual(['live', 'older', 'old']);
    expect(ids(await calls().dueCalls(P, now, 2, new Set(['live'])))).toEqual(['older', 'old']);
    expect(ids(await calls().dueCalls(P, now, 10, new Set(), ['register']))).toEqual([]);
    const look = await calls().lookDue(P, now, 10, new Set());
    expect(ids(look.due)).toEqual(['live', 'older', 'old']);
    expect(look.nextDueAt).toBeUndefined();
    expect(await calls().lookDue(P, now - 60_000, 10, new Set())).toEqual({
      due: [],
      nextDueAt: now - 40_000,
    });
    expect(await calls().nextDueAt(P)).toBe(now - 40_000);
    expect(await calls().nextDueAt('nobody')).toBeUndefined();
    expect(await calls().queueStats(P)).toEqual({ depth: 4, oldestCreatedAt: now - 40_000, failed: 0 });
    const deepest = await calls().deepestQueues(1);
    expect(deepest.total).toMatchObject({ depth: 5 });
    expect(deepest.top).toEqual([{ portalId: P, depth: 4, oldestCreatedAt: now - 40_000, failed: 0 }]);
    const work = await calls().portalsWithDueWork(now, 10);
    expect(work).toEqual(
      expect.arrayContaining([
        { portalId: P, kind: 'call' },
        { portalId: Q, kind: 'call' },
      ]),
    );
    expect(await calls().listCalls(P, 'queued', 10)).toHaveLength(4);
  });

  it('fenced marks and answers: the lease holder writes; a stale fence changes nothing and learns it lost', async () => {
    await ingest(P, [[startedEvent('c1')], [startedEvent('c2')]]);
    const ours = (await stores().leases.acquireLease(P, 'me', 60_000))!;
    const due = await calls().dueCalls(P, Date.now(), 10, new Set());
    const mark = (call: CallRecord): CallRecord => ({
      ...call,
      delivery: { ...call.delivery, attempts: call.delivery.attempts + 1 },
    });
    const marked = await calls().updateCallsFrom(P, due, mark, ours);
    expect(marked.map((call) => call.delivery.attempts)).toEqual([1, 1]);
    // Changed since it was read (intake, another write): read again and written, still under the fence.
    const again = await calls().updateCallsFrom(P, due, mark, ours);
    expect(again.map((call) => call.delivery.attempts)).toEqual([2, 2]);
    expect(await calls().updateCalls(P, ['c1', 'unknown'], mark, ours)).toHaveLength(1);

    await stores().leases.releaseLease(ours);
    const theirs = (await stores().leases.acquireLease(P, 'other', 60_000))!;
    expect(theirs.epoch).toBe(ours.epoch + 1);
    const current = await calls().dueCalls(P, Date.now(), 10, new Set());
    await expect(calls().updateCallsFrom(P, current, mark, ours)).rejects.toBeInstanceOf(LeaseLostError);
    await expect(calls().updateCalls(P, ['c1'], mark, ours)).rejects.toBeInstanceOf(LeaseLostError);
    expect(await calls().findCall(P, 'c1')).toMatchObject({ delivery: { attempts: 3 } });
    expect(await calls().findCall(P, 'c2')).toMatchObject({ delivery: { attempts: 2 } });
    // Unfenced (an operator's re-queue) goes through.
    expect(await calls().updateCalls(P, ['c2'], mark)).toMatchObject([{ delivery: { attempts: 3 } }]);
  });

  it('missed-call tasks: the calls awaiting a callback from an answered number before their deadline', async () => {
    const deadline = '2026-11-22T12:00:00+01:00';
    await ingest(P, [[startedEvent('m1')], [startedEvent('m2')]]);
    // m1 awaits a callback from its number (a task with a deadline); m2 has no task.
    await calls().updateCalls(P, ['m1'], (call) => ({ ...call, task: { deadline } }) as CallRecord);
    const phone = startedEvent('m1').phoneNumber!;
    const seen: string[] = [];
    const done = (call: CallRecord): CallRecord => {
      seen.push(call.callId);
      return { ...call, task: { ...call.task!, calledBackAt: Date.parse(deadline) - 1 } };
    };
    const late = Date.parse(deadline) + 1;
    expect(
      await calls().updateCallsAwaitingCallback(P, [{ callId: 'x', phone, answeredAt: late }], done),
    ).toEqual([]);
    expect(
      await calls().updateCallsAwaitingCallback(Q, [{ callId: 'x', phone, answeredAt: 1 }], done),
    ).toEqual([]);
    const updated = await calls().updateCallsAwaitingCallback(
      P,
      [{ callId: 'x', phone, answeredAt: 1 }],
      done,
    );
    expect(updated.map((call) => call.callId)).toEqual(['m1']);
    expect(seen).toEqual(['m1']);
    // Called back: no longer awaiting.
    expect(
      await calls().updateCallsAwaitingCallback(P, [{ callId: 'x', phone, answeredAt: 1 }], done),
    ).toEqual([]);
  });

  it('clicks: kept once per CALL_ID, a repeat changes nothing, another portal has its own', async () => {
    const click = {
      portalCallId: 'externalCall.1',
      userId: 3,
      phoneNumber: '+4930111',
      clickedAt: 1_700_000_000_000,
    };
    await calls().saveClick(P, click);
    await calls().saveClick(P, { ...click, userId: 9 });
    expect(await calls().findClick(P, 'externalCall.1')).toEqual(click);
    expect(await calls().findClick(Q, 'externalCall.1')).toBeUndefined();
    await calls().checkWritable();
  });
});
