import { ConsoleLogger, Logger } from '@nestjs/common';
import { CallEvent, CallRecord, PortalStep } from '../calls/call';
import { applyEvent, newCall } from '../calls/call-lifecycle';
import { WireCommand } from '../calls/step-planner';
import { BudgetUnit } from '../portal/budget-unit';
import { usableCapacity } from '../portal/budget-waiters';
import { BatchOutcome } from '../portal/portal-client';
import { classifyPortalError, PortalError } from '../portal/portal-error';
import { OperatingTime } from '../portal/operating-time';
import { RequestBudget } from '../portal/request-budget';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteCallStore } from '../store/sqlite/sqlite-call-store';
import { SqliteDatabase } from '../store/sqlite/sqlite-database';
import { SqliteLeaseStore } from '../store/sqlite/sqlite-lease-store';
import { DeliveryScheduler } from './delivery-scheduler';
import { LeaseKeeper } from './lease-keeper';
import { PortalTransport } from './portal-transport';

const PORTAL = 'portal.example';

type Script = (commands: WireCommand[]) => BatchOutcome | PortalError;

/** Answers like the portal: a CALL_ID per register, true for the rest. */
const portalOk = (commands: WireCommand[]): BatchOutcome => ({
  results: Object.fromEntries(
    commands.map(({ label, method }) => [
      label,
      method.endsWith('.register') ? { CALL_ID: `externalCall.${label}` } : true,
    ]),
  ),
  errors: {},
});

/**
 * The portal at the HTTP-free boundary: answers from a script, settles each budget unit as the real
 * client does (spent when a request leaves; given back when the credentials cannot be used).
 */
class ScriptedPortal implements PortalTransport {
  readonly portalId = PORTAL;
  /** A clock that stands still: the bucket's level counts units exactly. */
  readonly budget = new RequestBudget(1, 20, () => 0);
  operating?: OperatingTime;
  readonly requests: WireCommand[][] = [];
  private readonly scripts: (Script | 'credentials-unusable')[] = [];

  constructor(readonly maxBatchSize = 50) {}

  next(script: Script | 'credentials-unusable'): void {
    this.scripts.push(script);
  }

  /** While set, a request waits for it before the portal answers (a slow portal). */
  gate?: Promise<void>;
  /** Told when a request reaches the portal. */
  onRequest?: () => void;

  async batch(commands: WireCommand[], { unit }: { unit: BudgetUnit }): Promise<BatchOutcome> {
    this.onRequest?.();
    if (this.gate) await this.gate;
    const script = this.scripts.shift() ?? portalOk;
    if (script === 'credentials-unusable') {
      unit.giveBack();
      throw new PortalError('credentials', 'NEEDS_REAUTHORISATION', 'open /oauth/start');
    }
    unit.spend();
    this.requests.push(commands);
    const answer = script(commands);
    if (answer instanceof PortalError) throw answer;
    return answer;
  }
}

const methods = (request: WireCommand[]) => request.map((command) => command.method.split('.').pop());

describe('DeliveryScheduler (the loop) with the SQLite store on a temporary file and a scripted portal', () => {
  let dir: string;
  let leases: SqliteLeaseStore;
  let store: SqliteCallStore;
  let portal: ScriptedPortal;
  let lease: LeaseKeeper;
  let scheduler: DeliveryScheduler;
  let outcomes: [PortalStep, string][];

  async function setUp(options: { maxBatchSize?: number; defaultUserId?: number } = {}) {
    dir = mkdtempSync(join(tmpdir(), 'bridge-scheduler-'));
    const database = new SqliteDatabase(join(dir, 'bridge.sqlite'));
    leases = new SqliteLeaseStore(database);
    store = new SqliteCallStore(database);
    portal = new ScriptedPortal(options.maxBatchSize);
    outcomes = [];
    lease = new LeaseKeeper({
      store: leases,
      portalId: PORTAL,
      owner: 'replica-1',
      ttlMs: 60_000,
      onAcquired: () => undefined,
    });
    lease.start();
    for (let i = 0; i < 50 && !lease.current(); i++) await new Promise((resolve) => setImmediate(resolve));
    expect(lease.current()).toBeDefined();
    scheduler = new DeliveryScheduler(
      store,
      portal,
      {
        defaultUserId: options.defaultUserId,
        maxBackoffMs: 60_000,
        maxAttempts: 3,
        maxInFlight: 2,
        pauseMs: 30_000,
      },
      lease,
      {
        observer: { onCommand: (step, outcome) => outcomes.push([step, outcome]), onRetry: () => undefined },
      },
    );
  }

  // The loop logs every refusal; the assertions here read the store and the status instead.
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(new ConsoleLogger()));

  afterEach(async () => {
    await scheduler.stop();
    portal.budget.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function take(events: Partial<CallEvent>[], holdEndedWithoutStartMs = 60_000) {
    const settings = { now: Date.now() - 1000, holdEndedWithoutStartMs };
    await store.ingest(
      PORTAL,
      [events.map((event) => ({ at: '2026-11-23T10:00:00+01:00', ...event }) as CallEvent)],
      (call, event) => applyEvent(call ?? newCall(PORTAL, event.callId, settings.now), event, settings),
    );
  }

  const started = (callId: string, extra: Partial<CallEvent> = {}): Partial<CallEvent> => ({
    event: 'call.started',
    callId,
    direction: 'inbound',
    phoneNumber: '+493012345678',
    extension: '101',
    ...extra,
  });
  const ended = (callId: string, extra: Partial<CallEvent> = {}): Partial<CallEvent> => ({
    event: 'call.ended',
    callId,
    durationSec: 30,
    status: 'answered',
    ...extra,
  });
  const find = async (callId: string) => (await store.findCall(PORTAL, callId)) as CallRecord;
  const level = () => portal.budget.snapshot().level;

  it('ok: sends the due registers in one request, stores each CALL_ID, spends one unit', async () => {
    await setUp();
    await take([started('a'), started('b')]);
    expect((await scheduler.runOnce()).kind).toBe('batch');
    expect(portal.requests.map(methods)).toEqual([['register', 'register']]);
    expect(portal.requests[0][0].params).toMatchObject({ USER_PHONE_INNER: '101', EXTERNAL_CALL_ID: 'a' });
    expect(await find('a')).toMatchObject({
      portal: { callId: 'externalCall.register_0' },
      delivery: { state: 'registered' },
    });
    expect((await find('b')).delivery.stepsSent).toEqual({ register: 1 });
    expect(level()).toBe(1);
    expect(outcomes).toEqual([
      ['register', 'delivered'],
      ['register', 'delivered'],
    ]);
    expect(scheduler.portalStatus()).toMatchObject({ lastRequestOk: true, deliveringHere: true });
  });

  /** Counts the loop's and its batches' reads of the queue (lookDue, dueCalls, nextDueAt) from now on. */
  function countReads(): { reads: number } {
    const counted = { reads: 0 };
    for (const name of ['lookDue', 'dueCalls', 'nextDueAt'] as const) {
      const read = (store[name] as (...args: unknown[]) => Promise<unknown>).bind(store);
      (store as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
        // lookDue of the base class reads through dueCalls and nextDueAt: one look, one read.
        if (name === 'lookDue' || !looking) counted.reads += 1;
        if (name !== 'lookDue') return read(...args);
        looking = true;
        return read(...args).finally(() => (looking = false));
      };
    }
    let looking = false;
    return counted;
  }

  it("a quiet portal's call: one read of the queue per batch, and none once an answer left nothing due", async () => {
    await setUp();
    await take([started('a'), ended('a')]);
    const counted = countReads();
    expect((await scheduler.runOnce()).kind).toBe('batch');
    expect(counted.reads).toBe(1);
    // The register's answer left the finish due: the loop looks.
    expect((await scheduler.runOnce()).kind).toBe('batch');
    expect(counted.reads).toBe(2);
    // The finish took everything due, and its answer left the call with nothing due: no look after it.
    expect(await scheduler.runOnce()).toEqual({ kind: 'sleep', ms: 1000 });
    expect(counted.reads).toBe(2);
    expect(portal.requests.map(methods)).toEqual([['register'], ['finish']]);
    // New work wakes it, and it looks again.
    await take([started('b')]);
    scheduler.notify();
    expect((await scheduler.runOnce()).kind).toBe('batch');
    expect(counted.reads).toBe(3);
  });

  it('an answer that leaves a step due (a retry) is followed by a look', async () => {
    await setUp();
    await take([started('a')]);
    portal.next(() => classifyPortalError('QUERY_LIMIT_EXCEEDED', 'Too many requests', 503));
    const counted = countReads();
    expect((await scheduler.runOnce()).kind).toBe('batch');
    expect((await find('a')).delivery.dueAt).toBeDefined();
    // Not the drained sleep: the loop looks, and sleeps until the retry is due.
    const next = await scheduler.runOnce();
    expect(counted.reads).toBe(2);
    expect(next.kind).toBe('sleep');
  });

  it("a quiet portal's look that read every call due is planned from however long the unit took", async () => {
    await setUp();
    await take([started('a')]);
    // Each unit is held until the spec lets it go (a shared budget's statement on a busy database): how
    // long it takes is the spec's to say, not the machine's.
    const acquire = portal.budget.acquire.bind(portal.budget);
    let hold = heldUnit();
    portal.budget.acquire = async (...args) => {
      const unit = hold;
      unit.ask();
      await unit.released;
      return acquire(...args);
    };
    const counted = countReads();
    const quiet = scheduler.runOnce();
    await hold.asked;
    // Past the scheduler's reuse window (100 ms, a rule of its own): only "it read every call due" keeps
    // the look. A lower bound, so a slow machine only makes it longer.
    await new Promise((resolve) => setTimeout(resolve, 150));
    hold.release();
    expect((await quiet).kind).toBe('batch');
    expect(counted.reads).toBe(1);
    // New work during the wait: the batch reads again, and takes it too.
    await take([started('b')]);
    scheduler.notify();
    hold = heldUnit();
    const slow = scheduler.runOnce();
    await hold.asked;
    await take([started('c')]);
    scheduler.notify();
    await new Promise((resolve) => setTimeout(resolve, 150));
    hold.release();
    expect((await slow).kind).toBe('batch');
    expect(counted.reads).toBe(3);
    expect(portal.requests.map(methods)).toEqual([['register'], ['register', 'register']]);
  });

  it('after a batch that took everything due, the loop waits for a wake-up instead of looking again', async () => {
    await setUp();
    let release!: () => void;
    portal.gate = new Promise<void>((resolve) => (release = resolve));
    try {
      const reached = new Promise<void>((resolve) => (portal.onRequest = resolve));
      await take([started('a')]);
      const counted = countReads();
      scheduler.start(); // its first turn looks at once
      await reached;
      // The register is at the portal; the loop would have looked again at once before.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(counted.reads).toBe(1);
      // New work wakes it: a look, and the new call goes while the first is still at the portal, planned
      // from that look (it read every call due but the one in flight); then it waits again.
      await take([started('b')]);
      scheduler.notify();
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(counted.reads).toBe(2);
      expect(portal.requests.map(methods)).toEqual([]);
      portal.gate = undefined;
      release();
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(portal.requests.map(methods)).toEqual([['register'], ['register']]);
      expect(await find('a')).toMatchObject({ delivery: { state: 'registered' } });
      expect(await find('b')).toMatchObject({ delivery: { state: 'registered' } });
    } finally {
      portal.gate = undefined;
      release();
    }
  });

  it('register and finish of one call go in separate requests; finish and attachRecord share one', async () => {
    await setUp();
    await take([started('a'), ended('a', { recordingUrl: 'https://pbx/a.mp3' })]);
    await scheduler.runOnce();
    await scheduler.runOnce();
    expect(portal.requests.map(methods)).toEqual([['register'], ['finish', 'attachRecord']]);
    expect(await find('a')).toMatchObject({ recording: { attached: true }, delivery: { state: 'finished' } });
    expect((await find('a')).delivery.dueAt).toBeUndefined();
    expect(level()).toBe(2);
  });

  it('with room for one command, a finish goes alone and its recording follows in the next request', async () => {
    await setUp({ maxBatchSize: 1 });
    await take([started('a'), ended('a', { recordingUrl: 'https://pbx/a.mp3' })]);
    for (let i = 0; i < 3; i++) await scheduler.runOnce();
    expect(portal.requests.map(methods)).toEqual([['register'], ['finish'], ['attachRecord']]);
  });

  it('a command refused on its own fails its call; the others in the request go on', async () => {
    await setUp();
    await take([started('a'), started('b')]);
    portal.next((commands) => ({
      ...portalOk(commands),
      errors: { register_0: classifyPortalError('ERROR_CORE', 'PHONE_NUMBER is invalid', 400) },
    }));
    await scheduler.runOnce();
    expect(await find('a')).toMatchObject({ delivery: { state: 'failed', failed: true } });
    expect((await find('a')).delivery.lastError).toContain('PHONE_NUMBER is invalid');
    expect(await find('b')).toMatchObject({ delivery: { state: 'registered' } });
    expect(outcomes).toEqual([
      ['register', 'failed'],
      ['register', 'delivered'],
    ]);
  });

  it.each([
    ['503 QUERY_LIMIT_EXCEEDED', () => classifyPortalError('QUERY_LIMIT_EXCEEDED', 'Too many requests', 503)],
    ['a 502', () => classifyPortalError('', 'unexpected answer (HTTP 502)', 502)],
    ['a timeout', () => new PortalError('timeout', '', 'no answer within 10000 ms')],
  ])(
    '%s: every call of the request is retried later, nothing fails, delivery is not paused',
    async (_, error) => {
      await setUp();
      await take([started('a'), started('b')]);
      portal.next(error);
      const before = Date.now();
      await scheduler.runOnce();
      for (const callId of ['a', 'b']) {
        const call = await find(callId);
        expect(call).toMatchObject({ delivery: { state: 'queued', failed: false, nextStep: 'register' } });
        expect(call.delivery.dueAt).toBeGreaterThan(before);
        expect(call.delivery.lastError).toContain('retrying');
      }
      expect(scheduler.portalStatus()).toMatchObject({ lastRequestOk: false, paused: false });
      expect(level()).toBe(1);
      expect((await scheduler.runOnce()).kind).toBe('sleep');
    },
  );

  it('a request refused for its content: its calls go in requests of half as many commands', async () => {
    await setUp();
    await take([started('a'), started('b'), started('c'), started('d')]);
    portal.next(() => classifyPortalError('', 'unexpected answer (HTTP 403)', 403));
    await scheduler.runOnce();
    for (const callId of ['a', 'b', 'c', 'd']) expect((await find(callId)).delivery.batchLimit).toBe(2);
    expect(scheduler.portalStatus().paused).toBe(false);
  });

  it('credentials refused: delivery pauses with the reason, nothing is dropped; resume() sends again', async () => {
    await setUp();
    await take([started('a')]);
    portal.next(() => classifyPortalError('NO_AUTH_FOUND', 'Wrong authorization data', 401));
    await scheduler.runOnce();
    expect(scheduler.portalStatus()).toMatchObject({ paused: true, lastRequestOk: false });
    expect(scheduler.portalStatus().pausedReason).toContain('Wrong authorization data');
    expect(await find('a')).toMatchObject({
      delivery: { state: 'queued', failed: false, nextStep: 'register' },
    });
    const paused = await scheduler.runOnce();
    expect(paused.kind).toBe('sleep');
    expect(portal.requests).toHaveLength(1);
    scheduler.resume();
    await scheduler.runOnce();
    expect(portal.requests).toHaveLength(2);
    expect(await find('a')).toMatchObject({ delivery: { state: 'registered' } });
    expect(scheduler.portalStatus()).toMatchObject({ paused: false, lastRequestOk: true });
  });

  it('credentials unusable before sending: the client gives the unit back and delivery pauses', async () => {
    await setUp();
    await take([started('a')]);
    portal.next('credentials-unusable');
    await scheduler.runOnce();
    expect(portal.requests).toHaveLength(0);
    expect(level()).toBe(0);
    expect(scheduler.portalStatus().paused).toBe(true);
  });

  it('lease lost: the fenced write is refused, nothing is sent or stored, the unit goes back', async () => {
    await setUp();
    await take([started('a')]);
    const ours = lease.current()!;
    await leases.releaseLease(ours);
    expect(await leases.acquireLease(PORTAL, 'replica-2', 60_000)).toMatchObject({ epoch: ours.epoch + 1 });
    await scheduler.runOnce();
    expect(portal.requests).toHaveLength(0);
    expect(level()).toBe(0);
    expect(await find('a')).toMatchObject({ delivery: { stepsSent: {}, nextStep: 'register' } });
    expect(lease.current()).toBeUndefined();
    expect(scheduler.portalStatus().deliveringHere).toBe(false);
    expect((await scheduler.runOnce()).kind).toBe('sleep');
  });

  it('parks a held call whose start never came, sends nothing for it, and gives the unit back', async () => {
    await setUp();
    await take([ended('held')], 0);
    expect(await find('held')).toMatchObject({ delivery: { nextStep: 'wait-start' } });
    expect((await scheduler.runOnce()).kind).toBe('batch');
    expect(portal.requests).toHaveLength(0);
    expect(await find('held')).toMatchObject({ party: { holdExpired: true }, delivery: { state: 'failed' } });
    expect((await find('held')).delivery.dueAt).toBeUndefined();
    expect(level()).toBe(0);
  });

  it('a call dropped while marking (no employee at all) is failed, and the unit goes back unsent', async () => {
    await setUp();
    await take([started('a', { extension: undefined })]);
    await scheduler.runOnce();
    expect(portal.requests).toHaveLength(0);
    expect(level()).toBe(0);
    expect((await find('a')).delivery.lastError).toContain('no employee for this call');
    // With nothing due the loop sleeps instead of taking a unit.
    expect((await scheduler.runOnce()).kind).toBe('sleep');
    expect(level()).toBe(0);
  });

  it('operating time: a method without room waits, the others fill the request; the loop sleeps till room', async () => {
    await setUp();
    const now = Date.now();
    portal.operating = new OperatingTime({ windowMs: 60_000, limitSec: 48, targetShare: 1 }, () => now);
    // Registers have used the whole limit (the portal said so); finishes have room.
    portal.operating.observe('telephony.externalcall.register', {
      usedSec: 48,
      costSec: 0.04,
      resetAtMs: now + 30_000,
    });
    portal.operating.observe('telephony.externalcall.finish', { usedSec: 1, costSec: 0.04 });
    await take([started('a'), ended('a'), started('b')]);
    await store.updateCalls(
      PORTAL,
      ['a'],
      (call) => ({
        ...call,
        portal: { ...call.portal, callId: 'x.1' },
        delivery: { ...call.delivery, nextStep: 'finish' },
      }),
      lease.current()!,
    );
    expect((await scheduler.runOnce()).kind).toBe('batch');
    expect(portal.requests.map(methods)).toEqual([['finish']]);
    // Only b's register is due now, and its method has no room: no request, the unit goes back, the loop
    // sleeps (at most a second at a time) until the portal's reset.
    const levelBefore = level();
    expect((await scheduler.runOnce()).kind).toBe('batch');
    expect(portal.requests).toHaveLength(1);
    expect(level()).toBe(levelBefore);
    const turn = await scheduler.runOnce();
    expect(turn).toEqual({ kind: 'sleep', ms: 1000 });
    expect((await find('b')).delivery.stepsSent).toEqual({});
  });

  it('keeps as many batches in flight as the answer time needs for the budget, within the cap', async () => {
    await setUp();
    expect(scheduler.inFlightLimit()).toBe(2);
    const wide = new DeliveryScheduler(
      store,
      portal,
      { maxBackoffMs: 1000, maxAttempts: 3, maxInFlight: 16, pauseMs: 1000 },
      lease,
    );
    // Before any answer: the cap, so a burst is not wasted on waiting.
    expect(wide.inFlightLimit()).toBe(16);
    await take([started('a')]);
    portal.next((commands) => portalOk(commands));
    // A fast answer: two in flight suffice at 1 request/s.
    await wide.runOnce();
    expect(wide.inFlightLimit()).toBeLessThanOrEqual(3);
    await wide.stop();
  });

  it('stop() ends the wait for a unit: none is taken and nothing is sent', async () => {
    await setUp();
    await take([started('a')]);
    // Fill the bucket: the loop's next unit has to wait.
    for (let i = 0; i + 1 <= usableCapacity(20); i++) await portal.budget.acquire();
    const full = level();
    const turn = scheduler.runOnce();
    await scheduler.stop();
    expect((await turn).kind).toBe('stopped');
    expect(level()).toBe(full);
    expect(portal.requests).toHaveLength(0);
  });
});

/** A budget unit the spec hands out itself: `asked` once the scheduler asks for it, sent on `release()`. */
function heldUnit(): { asked: Promise<void>; ask: () => void; released: Promise<void>; release: () => void } {
  let ask!: () => void;
  let release!: () => void;
  const asked = new Promise<void>((resolve) => (ask = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  return { asked, ask, released, release };
}
