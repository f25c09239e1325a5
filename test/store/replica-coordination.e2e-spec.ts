import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Pool } from 'pg';
import { join } from 'node:path';
import { CallEvent } from '../../src/calls/call';
import { applyEvent, newCall } from '../../src/calls/call-lifecycle';
import { loadConfig } from '../../src/config/app-config';
import { SharedRequestBudget } from '../../src/portal/shared-request-budget';
import { LeaseLostError } from '../../src/store/coordination-store';
import { createStores, Stores } from '../../src/store/store.module';
import { eventually } from '../support/bridge-harness';
import { onPostgres, testDatabaseUrl } from '../support/test-database';
import { endedEvent, startedEvent } from '../support/call-events';

const PORTAL = 'coordination';
const settings = { now: Date.now(), holdEndedWithoutStartMs: 3_600_000 };
const applyFor = (portal: string) => (call: Parameters<typeof applyEvent>[0] | undefined, event: CallEvent) =>
  applyEvent(call ?? newCall(portal, event.callId, Date.now()), event, settings);
const apply = applyFor(PORTAL);

/**
 * What replicas sharing one database rely on, through two independent store instances (two connection
 * pools, or two SQLite connections) on the same database, as two processes would have: the same call
 * written by both at once, the delivery lease with its fencing, and (PostgreSQL) the shared bucket.
 */
describe(`replica coordination in the store (${onPostgres ? 'PostgreSQL' : 'SQLite'})`, () => {
  let dir: string;
  let first: Stores;
  let second: Stores;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'bridge-coord-'));
    const config = loadConfig({ NODE_ENV: 'test', PBX_TOKENS: 'x', DATABASE_URL: testDatabaseUrl(dir) });
    first = await createStores(config);
    second = await createStores(config);
  });
  afterAll(async () => {
    await first.calls.close();
    await second.calls.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('due calls can leave out the calls whose next step waits (operating time), oldest due first', async () => {
    const portal = 'steps';
    const applyHere = applyFor(portal);
    await first.calls.ingest(
      portal,
      [[startedEvent('s-reg')], [startedEvent('s-fin'), endedEvent('s-fin')]],
      applyHere,
    );
    // s-fin is registered: its next step is finish.
    await first.calls.updateCalls(portal, ['s-fin'], (call) => ({
      ...call,
      portal: { ...call.portal, callId: 'x.1' },
      delivery: { ...call.delivery, nextStep: 'finish' },
    }));
    const later = Date.now() + 1000;
    const all = await first.calls.dueCalls(portal, later, 10, new Set());
    expect(all.map((call) => call.callId).sort()).toEqual(['s-fin', 's-reg']);
    const withoutRegisters = await second.calls.dueCalls(portal, later, 10, new Set(), ['register']);
    expect(withoutRegisters.map((call) => call.callId)).toEqual(['s-fin']);
    expect(await second.calls.dueCalls(portal, later, 10, new Set(), ['register', 'finish'])).toEqual([]);
  });

  it('events of one call taken in by two replicas at once all land on the call', async () => {
    const ids = Array.from({ length: 200 }, (_, i) => `both-${i}`);
    // Each call's start goes to one replica and its end to the other, in small concurrent batches.
    await Promise.all(
      ids.flatMap((id, i) => [
        first.calls.ingest(PORTAL, [[startedEvent(id)]], apply),
        second.calls.ingest(PORTAL, [[endedEvent(id)]], apply),
        i % 3 === 0
          ? second.calls.ingest(PORTAL, [[startedEvent(id)], [endedEvent(id)]], apply)
          : Promise.resolve([]),
      ]),
    );
    for (const id of ids) {
      const call = await first.calls.findCall(PORTAL, id);
      expect(call).toMatchObject({
        party: { heardStart: true, direction: 'inbound', ended: { durationSec: 60 } },
      });
      expect(call!.delivery.nextStep).toBe('register');
    }
  });

  it('a repeat within one intake batch and across replicas counts as a duplicate once stored', async () => {
    const [result] = await first.calls.ingest(
      PORTAL,
      [[startedEvent('dup-1'), startedEvent('dup-1'), endedEvent('dup-1')]],
      apply,
    );
    expect(result).toEqual({ accepted: 2, duplicates: 1 });
    const [again] = await second.calls.ingest(PORTAL, [[endedEvent('dup-1')]], apply);
    expect(again).toEqual({ accepted: 0, duplicates: 1 });
  });

  it('the same events sent to two replicas at once are accepted once, the other copy a duplicate', async () => {
    // The second waits on the first's locks; it must read what the first committed meanwhile.
    const ids = Array.from({ length: 60 }, (_, i) => `twice-${i}`);
    const results = await Promise.all(
      ids.flatMap((id) =>
        [first, second].map((stores) =>
          stores.calls.ingest(PORTAL, [[startedEvent(id), endedEvent(id)]], apply),
        ),
      ),
    );
    for (const [index, id] of ids.entries()) {
      const [[one], [other]] = results.slice(index * 2, index * 2 + 2);
      expect({
        id,
        accepted: one.accepted + other.accepted,
        duplicates: one.duplicates + other.duplicates,
      }).toEqual({ id, accepted: 2, duplicates: 2 });
    }
  });

  it('an intake that fails stores nothing; one that commits tells the other replica once (NOTIFY with COMMIT)', async () => {
    const portal = `failing-${Date.now()}`;
    let heard = 0;
    const stop = second.calls.watchNewWork(portal, () => (heard += 1));
    try {
      if (onPostgres) {
        // The listener connects in the background: wait until it hears a committed intake, then count anew.
        let warm = 0;
        await eventually(async () => {
          await first.calls.ingest(portal, [[startedEvent(`warm-${(warm += 1)}`)]], applyFor(portal));
          await new Promise((resolve) => setTimeout(resolve, 100));
          return heard > 0 ? true : undefined;
        });
        await new Promise((resolve) => setTimeout(resolve, 300));
        heard = 0;
      }
      await expect(
        first.calls.ingest(portal, [[startedEvent('fail-1')]], () => {
          throw new Error('apply failed');
        }),
      ).rejects.toThrow('apply failed');
      expect(await first.calls.findCall(portal, 'fail-1')).toBeUndefined();
      // Not stored as a key either: the same event again is accepted.
      const [result] = await first.calls.ingest(portal, [[startedEvent('fail-1')]], applyFor(portal));
      expect(result).toEqual({ accepted: 1, duplicates: 0 });
      expect(await second.calls.findCall(portal, 'fail-1')).toMatchObject({ party: { heardStart: true } });
      if (onPostgres) {
        await eventually(async () => (heard > 0 ? true : undefined));
        // One notification, from the intake that committed.
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(heard).toBe(1);
      }
    } finally {
      stop();
    }
  });

  it("the loop's look: the due calls as dueCalls reads them, or when none is due, the next due time", async () => {
    const portal = `look-${Date.now()}`;
    await first.calls.ingest(portal, [[startedEvent('look-a')], [startedEvent('look-b')]], applyFor(portal));
    const now = Date.now() + 1000;
    const looked = await second.calls.lookDue(portal, now, 10, new Set(['look-b']));
    expect(looked.due.map((call) => call.callId)).toEqual(['look-a']);
    expect(looked.nextDueAt).toBeUndefined();
    expect(looked.due).toEqual(await second.calls.dueCalls(portal, now, 10, new Set(['look-b'])));
    // Both wait a minute: nothing is due, and the look says when the first comes due.
    const at = Date.now() + 60_000;
    await first.calls.updateCalls(portal, ['look-a', 'look-b'], (call) => ({
      ...call,
      delivery: { ...call.delivery, dueAt: call.callId === 'look-a' ? at + 5 : at },
    }));
    expect(await second.calls.lookDue(portal, Date.now(), 10, new Set())).toEqual({ due: [], nextDueAt: at });
    // A portal with nothing queued: no due time at all.
    expect(await second.calls.lookDue(`${portal}-empty`, Date.now(), 10, new Set())).toEqual({ due: [] });
  });

  (onPostgres ? it : it.skip)(
    "a replica hears another's new work, never its own (what stored it woke delivery there already)",
    async () => {
      const portal = `own-${Date.now()}`;
      const heardBy = { first: 0, second: 0 };
      const stops = [
        first.calls.watchAnyNewWork((id) => void (id === portal && (heardBy.first += 1))),
        second.calls.watchAnyNewWork((id) => void (id === portal && (heardBy.second += 1))),
      ];
      try {
        // The listeners connect in the background: until the second hears the first's intake.
        let n = 0;
        await eventually(async () => {
          await first.calls.ingest(portal, [[startedEvent(`own-${(n += 1)}`)]], applyFor(portal));
          await new Promise((resolve) => setTimeout(resolve, 100));
          return heardBy.second > 0 ? true : undefined;
        });
        await second.calls.ingest(portal, [[startedEvent('own-from-second')]], applyFor(portal));
        await eventually(async () => (heardBy.first > 0 ? true : undefined));
        await new Promise((resolve) => setTimeout(resolve, 300));
        // The first heard only the second's one intake, none of its own n; the second heard the first's
        // (those after its listener connected), never its own.
        expect(heardBy.first).toBe(1);
        expect(heardBy.second).toBeGreaterThanOrEqual(1);
        expect(heardBy.second).toBeLessThanOrEqual(n);
      } finally {
        for (const stop of stops) stop();
      }
    },
  );

  it('one replica holds the delivery lease; a takeover fences the old holder out', async () => {
    const portal = `lease-${Date.now()}`;
    const held = await first.leases.acquireLease(portal, 'replica-a', 400);
    expect(held).toMatchObject({ owner: 'replica-a', epoch: 1 });
    expect(await second.leases.acquireLease(portal, 'replica-b', 400)).toBeUndefined();
    // Renewal by the holder keeps its epoch.
    expect(await first.leases.acquireLease(portal, 'replica-a', 400)).toMatchObject({ epoch: 1 });

    await first.calls.ingest(portal, [[startedEvent('fenced')]], (call, event) =>
      applyEvent(call ?? newCall(portal, event.callId, Date.now()), event, settings),
    );
    const mark = (reason: string) => (call: Parameters<typeof applyEvent>[0]) => ({
      ...call,
      delivery: { ...call.delivery, lastError: reason },
    });
    await first.calls.updateCalls(portal, ['fenced'], mark('written by a'), held);

    await new Promise((resolve) => setTimeout(resolve, 500));
    const takeover = await second.leases.acquireLease(portal, 'replica-b', 10_000);
    expect(takeover).toMatchObject({ owner: 'replica-b', epoch: 2 });

    // The old holder's late write is refused and changes nothing; the new holder's lands.
    await expect(
      first.calls.updateCalls(portal, ['fenced'], mark('late write by a'), held),
    ).rejects.toBeInstanceOf(LeaseLostError);
    expect((await first.calls.findCall(portal, 'fenced'))!.delivery.lastError).toBe('written by a');
    await second.calls.updateCalls(portal, ['fenced'], mark('written by b'), takeover);
    expect((await first.calls.findCall(portal, 'fenced'))!.delivery.lastError).toBe('written by b');

    // A lease given up is free at once, for the next epoch.
    await second.leases.releaseLease(takeover!);
    expect(await first.leases.acquireLease(portal, 'replica-a', 10_000)).toMatchObject({ epoch: 3 });
  });

  it("delivery's write from the calls as read: one statement, fenced, and a call written since is read again", async () => {
    const portal = `from-${Date.now()}`;
    const held = (await first.leases.acquireLease(portal, 'replica-a', 60_000))!;
    await first.calls.ingest(portal, [[startedEvent('from-1'), startedEvent('from-2')]], applyFor(portal));
    const due = await first.calls.dueCalls(portal, Date.now() + 60_000, 10, new Set());
    expect(due.map((call) => call.callId).sort()).toEqual(['from-1', 'from-2']);
    // Another replica writes one of them after the read (an operator's change): this copy is stale now.
    await second.calls.updateCalls(portal, ['from-2'], (call) => ({
      ...call,
      delivery: { ...call.delivery, lastError: 'meanwhile' },
    }));
    const seen: string[] = [];
    const written = await first.calls.updateCallsFrom(
      portal,
      due,
      (call) => {
        seen.push(`${call.callId}:${call.delivery.lastError ?? ''}`);
        return { ...call, delivery: { ...call.delivery, attempts: (call.delivery.attempts ?? 0) + 1 } };
      },
      held,
    );
    expect(written.map((call) => call.callId)).toEqual(due.map((call) => call.callId));
    // The stale copy's change was not stored: the call was read again, with the other write, and changed once.
    const stored = await first.calls.findCall(portal, 'from-2');
    expect(stored!.delivery.lastError).toBe('meanwhile');
    expect(stored!.delivery.attempts).toBe(1);
    expect(seen).toContain('from-2:meanwhile');
    expect((await first.calls.findCall(portal, 'from-1'))!.delivery.attempts).toBe(1);

    // A write from what the last one returned; then, after a takeover, the old holder's write is refused.
    const again = await first.calls.updateCallsFrom(
      portal,
      written,
      (call) => ({ ...call, delivery: { ...call.delivery, lastError: 'second write by a' } }),
      held,
    );
    expect(again.map((call) => call.delivery.lastError)).toEqual(['second write by a', 'second write by a']);
    await first.leases.releaseLease(held);
    const takeover = (await second.leases.acquireLease(portal, 'replica-b', 60_000))!;
    expect(takeover.epoch).toBe(held.epoch + 1);
    await expect(
      first.calls.updateCallsFrom(
        portal,
        again,
        (call) => ({ ...call, delivery: { ...call.delivery, lastError: 'late write by a' } }),
        held,
      ),
    ).rejects.toBeInstanceOf(LeaseLostError);
    expect((await first.calls.findCall(portal, 'from-1'))!.delivery.lastError).toBe('second write by a');
    await second.calls.updateCallsFrom(
      portal,
      again,
      (call) => ({ ...call, delivery: { ...call.delivery, lastError: 'written by b' } }),
      takeover,
    );
    expect((await first.calls.findCall(portal, 'from-1'))!.delivery.lastError).toBe('written by b');
  });

  it("many portals' looks and fenced writes at once: each portal its own calls, a lost lease refuses only its own", async () => {
    const stamp = Date.now();
    const portals = Array.from({ length: 12 }, (_, i) => `group-${i}-${stamp}`);
    const leases = await Promise.all(
      portals.map((portal) => first.leases.acquireLease(portal, 'replica-a', 60_000)),
    );
    for (const portal of portals) {
      await first.calls.ingest(
        portal,
        [[startedEvent(`${portal}-a`)], [startedEvent(`${portal}-b`)]],
        applyFor(portal),
      );
    }
    // PostgreSQL sends what is asked in one tick as one statement (`pg`'s Pool counted, not replaced).
    const sent = onPostgres ? jest.spyOn(Pool.prototype, 'query') : undefined;
    const later = Date.now() + 1000;
    const looks = await Promise.all(
      portals.map((portal, i) =>
        first.calls.lookDue(portal, later, 10, new Set(i % 2 ? [`${portal}-b`] : [])),
      ),
    );
    if (sent) expect(sent.mock.calls.length).toBeLessThanOrEqual(2);
    looks.forEach((look, i) => {
      const portal = portals[i];
      expect(look.due.map((call) => call.callId).sort()).toEqual(
        i % 2 ? [`${portal}-a`] : [`${portal}-a`, `${portal}-b`],
      );
      expect(look.due.every((call) => call.portalId === portal)).toBe(true);
    });

    // The third portal's lease is taken over: its write alone is refused, the others land.
    await first.leases.releaseLease(leases[2]!);
    await second.leases.acquireLease(portals[2], 'replica-b', 60_000);
    sent?.mockClear();
    const writes = await Promise.allSettled(
      looks.map((look, i) =>
        first.calls.updateCallsFrom(
          portals[i],
          look.due,
          (call) => ({ ...call, delivery: { ...call.delivery, attempts: 7 } }),
          leases[i]!,
        ),
      ),
    );
    if (sent) expect(sent.mock.calls.length).toBeLessThanOrEqual(2);
    sent?.mockRestore();
    writes.forEach((write, i) => {
      if (i === 2) expect(write).toMatchObject({ status: 'rejected', reason: expect.any(LeaseLostError) });
      else expect(write).toMatchObject({ status: 'fulfilled' });
    });
    for (const [i, portal] of portals.entries()) {
      const stored = await first.calls.findCall(portal, `${portal}-a`);
      expect(stored!.delivery.attempts).toBe(i === 2 ? 0 : 7);
    }

    // Two writes of one call asked at once both land, the second on what the first wrote.
    const portal = portals[0];
    const [call] = looks[0].due.filter((one) => one.callId === `${portal}-a`);
    const fresh = await first.calls.updateCallsFrom(portal, [call], (one) => one, leases[0]!);
    const both = await Promise.all([
      first.calls.updateCallsFrom(
        portal,
        fresh,
        (one) => ({ ...one, delivery: { ...one.delivery, attempts: (one.delivery.attempts ?? 0) + 1 } }),
        leases[0]!,
      ),
      first.calls.updateCallsFrom(
        portal,
        fresh,
        (one) => ({ ...one, delivery: { ...one.delivery, attempts: (one.delivery.attempts ?? 0) + 1 } }),
        leases[0]!,
      ),
    ]);
    expect(both.map(([one]) => one.delivery.attempts).sort()).toEqual([8, 9]);
    expect((await first.calls.findCall(portal, `${portal}-a`))!.delivery.attempts).toBe(9);
  });

  it("many portals' intakes at once: one transaction on PostgreSQL, and one portal's failure is its own", async () => {
    const stamp = Date.now();
    const portals = Array.from({ length: 8 }, (_, i) => `intake-${i}-${stamp}`);
    const transactions = onPostgres ? jest.spyOn(Pool.prototype, 'connect') : undefined;
    const results = await Promise.all(
      portals.map((portal) =>
        first.calls.ingest(
          portal,
          [[startedEvent(`${portal}-call`)], [startedEvent(`${portal}-call`)]],
          applyFor(portal),
        ),
      ),
    );
    if (transactions) expect(transactions.mock.calls.length).toBeLessThanOrEqual(2);
    transactions?.mockRestore();
    // Each portal's own answer: the repeat within its batch a duplicate, its call its own.
    expect(results).toEqual(
      portals.map(() => [
        { accepted: 1, duplicates: 0 },
        { accepted: 0, duplicates: 1 },
      ]),
    );
    for (const [i, portal] of portals.entries()) {
      expect(await second.calls.findCall(portal, `${portal}-call`)).toMatchObject({
        portalId: portal,
        party: { heardStart: true },
      });
      expect(
        await second.calls.findCall(portal, `${portals[(i + 1) % portals.length]}-call`),
      ).toBeUndefined();
    }

    // The fourth and sixth portals' events cannot be applied: their intakes fail, storing nothing (whatever
    // was thrown); the others' land.
    const attempts = await Promise.allSettled(
      portals.map((portal, i) =>
        first.calls.ingest(portal, [[endedEvent(`${portal}-call`)]], (call, event) => {
          if (i === 3) throw new Error('cannot apply');
          if (i === 5) throw 'not an Error';
          return applyFor(portal)(call, event);
        }),
      ),
    );
    attempts.forEach((attempt, i) =>
      expect(attempt).toMatchObject(
        i === 3
          ? { status: 'rejected', reason: { message: 'cannot apply' } }
          : i === 5
            ? { status: 'rejected' }
            : { status: 'fulfilled' },
      ),
    );
    for (const [i, portal] of portals.entries()) {
      const call = await second.calls.findCall(portal, `${portal}-call`);
      expect(call!.party.ended).toEqual(
        i === 3 || i === 5 ? undefined : expect.objectContaining({ durationSec: 60 }),
      );
    }
    // Sent again, it is new for the failed portals and a duplicate for the others.
    const again = await Promise.all(
      portals.map((portal) => first.calls.ingest(portal, [[endedEvent(`${portal}-call`)]], applyFor(portal))),
    );
    expect(again).toEqual(
      portals.map((_, i) => [
        i === 3 || i === 5 ? { accepted: 1, duplicates: 0 } : { accepted: 0, duplicates: 1 },
      ]),
    );
  });

  it("one statement renews all of a replica's leases it still holds, and leaves out one taken over", async () => {
    const portals = [0, 1, 2].map((i) => `renew-${i}-${Date.now()}`);
    const held = await Promise.all(
      portals.map((portal) => first.leases.acquireLease(portal, 'replica-a', 300)),
    );
    await new Promise((resolve) => setTimeout(resolve, 400));
    // The third expired and another replica took it; the first two expired too but nobody took them.
    const taken = await second.leases.acquireLease(portals[2], 'replica-b', 60_000);
    expect(taken).toMatchObject({ owner: 'replica-b', epoch: 2 });
    const renewed = await first.leases.renewLeases(
      'replica-a',
      held.map((lease) => lease!),
      60_000,
    );
    expect(renewed.sort((a, b) => a.portalId.localeCompare(b.portalId))).toEqual(
      held.slice(0, 2).map((lease) => ({ portalId: lease!.portalId, owner: 'replica-a', epoch: 1 })),
    );
    // Renewed for 60 s: nobody takes them now.
    expect(await second.leases.acquireLease(portals[0], 'replica-b', 60_000)).toBeUndefined();
    expect(await first.leases.renewLeases('replica-a', [], 60_000)).toEqual([]);
    // A lease given up is not renewed (its owner stopped), and is free for the next epoch.
    await first.leases.releaseLease(held[1]!);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await second.leases.acquireLease(portals[1], 'replica-b', 60_000)).toMatchObject({ epoch: 2 });
    expect(await first.leases.renewLeases('replica-a', [held[1]!], 60_000)).toEqual([]);
  });

  (onPostgres ? it : it.skip)(
    "wakes another replica's delivery when a call is taken in or re-queued, for its own portal only",
    async () => {
      const heard: string[] = [];
      const stops = ['heard-portal', 'other-portal'].map((portal) =>
        second.calls.watchNewWork(portal, () => heard.push(portal)),
      );
      // The listening connection may still be opening: take calls in until the first wake-up is heard.
      await eventually(async () => {
        await first.calls.ingest(
          'heard-portal',
          [[startedEvent(`wake-${heard.length}-${Date.now()}`)]],
          applyFor('heard-portal'),
        );
        return heard.length > 0 ? true : undefined;
      });
      expect(heard.every((portal) => portal === 'heard-portal')).toBe(true);

      // A delivery write (fenced) wakes nobody; an operator's re-queue (unfenced) does. Notifications arrive
      // in commit order, so once a marker on the other portal is heard, everything before it has been.
      const lease = await first.leases.acquireLease('heard-portal', 'replica-a', 10_000);
      await first.calls.ingest('heard-portal', [[startedEvent('wake-requeue')]], applyFor('heard-portal'));
      await first.calls.ingest('other-portal', [[startedEvent('wake-marker')]], applyFor('other-portal'));
      await eventually(async () => (heard.includes('other-portal') ? true : undefined));
      heard.length = 0;
      await first.calls.updateCalls(
        'heard-portal',
        ['wake-requeue'],
        (c) => ({ ...c, delivery: { ...c.delivery, attempts: 1 } }),
        lease,
      );
      await first.calls.updateCalls('heard-portal', ['wake-requeue'], (c) => ({
        ...c,
        delivery: { ...c.delivery, attempts: 2 },
      }));
      await first.calls.updateCalls('other-portal', ['wake-marker'], (c) => ({
        ...c,
        delivery: { ...c.delivery, attempts: 1 },
      }));
      await eventually(async () => (heard.includes('other-portal') ? true : undefined));
      expect(heard).toEqual(['heard-portal', 'other-portal']);
      for (const stop of stops) stop();
    },
  );

  (onPostgres ? it : it.skip)(
    'the shared bucket grants the burst once across replicas and keeps a reserve for lookups',
    async () => {
      const portal = `bucket-${Date.now()}`;
      // Two replicas' budgets, 2/s with a burst of 50: 48 usable (4 % headroom), 4 of them reserved for lookups.
      const budgets = [first, second].map((stores) => new SharedRequestBudget(stores.bucket!, portal, 2, 50));
      let granted = 0;
      const waiting = Array.from({ length: 60 }, (_, i) =>
        budgets[i % 2].acquire('background').then(() => (granted += 1)),
      );
      await new Promise((resolve) => setTimeout(resolve, 1500));
      // 44 at once, plus at most the drain of 2/s over the wait.
      expect(granted).toBeGreaterThanOrEqual(44);
      expect(granted).toBeLessThanOrEqual(44 + 4);
      // A lookup on either replica still gets a unit at once from the reserve.
      const lookupStarted = Date.now();
      await budgets[1].acquire('interactive');
      expect(Date.now() - lookupStarted).toBeLessThan(1000);
      for (const budget of budgets) budget.stop();
      await Promise.all(waiting);
    },
  );
});
