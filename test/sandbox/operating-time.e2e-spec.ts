import { SandboxPortal } from '../../sandbox';
import { eventually } from '../support/bridge-harness';
import { query, request } from './http';

const REGISTER = 'telephony.externalcall.register';
const FINISH = 'telephony.externalcall.finish';

/** Server time per method (how real portals behave "Errors"): accounted, reported, and blocked past the limit. */
describe('sandbox portal: slow answers and the operating-time limit', () => {
  let portal: SandboxPortal;
  const call = (method: string, params: Record<string, unknown> = {}) =>
    request(`${portal.webhookUrl}${method}?${query(params)}`);
  const batch = (cmd: Record<string, string>) =>
    request(`${portal.webhookUrl}batch`, { json: { halt: 0, cmd } });
  const control = (path: string, json?: unknown) =>
    request(`${portal.url}/_sandbox/${path}`, json === undefined ? {} : { json });
  const register = (n: number) =>
    `${REGISTER}?${query({ USER_PHONE_INNER: '101', PHONE_NUMBER: `+4940${1000000 + n}`, TYPE: 2, CRM_CREATE: 0 })}`;

  beforeAll(async () => {
    // 100 ms a command; a method may use 1 s of server time in a 60-s window.
    portal = await SandboxPortal.start({ commandMs: 100, operatingWindowSec: 60, operatingLimitSec: 1 });
  });
  afterAll(() => portal.close());
  beforeEach(() => portal.reset());
  afterEach(() => portal.setPerformance({ charge: 'run' }));

  it('a direct call reports its method use in time.operating, growing by the server time of each call', async () => {
    const before = Date.now();
    const first = await call('user.current');
    const second = await call('user.current');
    expect(first.status).toBe(200);
    expect(first.body.time.operating).toBeCloseTo(0.1);
    expect(second.body.time.operating).toBeCloseTo(0.2);
    expect(second.body.time.duration).toBeCloseTo(0.1);
    // The first charge's bucket leaves a window after that charge, at the whole second.
    const resetAt = second.body.time.operating_reset_at;
    expect(resetAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) + 59);
    expect(resetAt).toBeLessThanOrEqual(Date.now() / 1000 + 60);
  });

  it('a batch of n commands answers no sooner than n × commandMs, each command charged to its own method', async () => {
    const sent = Date.now();
    const answer = await batch({ r_1: register(1), r_2: register(2), me: 'user.current' });
    // A lower bound on the sandbox's own rule (commandMs of server time per command), by its timers;
    // a few ms of slack: timers and Date.now round differently.
    expect(Date.now() - sent).toBeGreaterThanOrEqual(290);
    const times = answer.body.result.result_time;
    expect(times.r_1.operating).toBeCloseTo(0.1);
    expect(times.r_2.operating).toBeCloseTo(0.2);
    expect(times.me.operating).toBeCloseTo(0.1);
    // Commands run one after another: the second starts when the first finishes.
    expect(times.r_2.start).toBeCloseTo(times.r_1.finish);
    // The batch's own time is its whole server time; the batch itself is not charged.
    expect(answer.body.time.duration).toBeCloseTo(0.3);
    expect(answer.body.time.operating).toBe(0);
    const view = (await control('operating')).body;
    expect(view.methods[REGISTER].usedSec).toBeCloseTo(0.2);
    expect(view.methods['user.current'].usedSec).toBeCloseTo(0.1);
  });

  it('past the limit the method answers 429 OPERATION_TIME_LIMIT; other methods go on, in a batch too', async () => {
    // Eleven registers: 1.1 s, over the 1-s limit once the eleventh has run.
    const first = await batch(
      Object.fromEntries(Array.from({ length: 11 }, (_, n) => [`r_${n}`, register(n)])),
    );
    expect(first.body.result.result_error).toEqual([]);
    const direct = await call(REGISTER, { USER_PHONE_INNER: '101', PHONE_NUMBER: '+4940555', TYPE: 2 });
    expect(direct.status).toBe(429);
    expect(direct.body).toMatchObject({
      error: 'OPERATION_TIME_LIMIT',
      error_description: 'Method is blocked due to operation time limit.',
    });
    expect(direct.body.time.operating).toBeCloseTo(1.1);
    expect(direct.body.time.operating_reset_at).toBeGreaterThan(Date.now() / 1000);
    const mixed = await batch({ r_late: register(99), me: 'user.current' });
    expect(mixed.status).toBe(200);
    expect(mixed.body.result.result_error.r_late).toEqual({
      error: 'OPERATION_TIME_LIMIT',
      error_description: 'Method is blocked due to operation time limit.',
    });
    expect(mixed.body.result.result.me).toMatchObject({ ID: '1' });
    expect((await control('stats')).body.operationTimeLimited).toBe(2);
    expect((await control('operating')).body).toMatchObject({
      methods: { [REGISTER]: { blocked: true } },
      refused: 2,
    });
    // A finish is its own method: not blocked.
    const finish = await call(FINISH, { CALL_ID: 'externalCall.none', USER_ID: 1, DURATION: 5 });
    expect(finish.body.error).not.toBe('OPERATION_TIME_LIMIT');
    // Once the window has passed, the method works again.
    await control('clock', { advanceSec: 61 });
    const later = await call(REGISTER, { USER_PHONE_INNER: '101', PHONE_NUMBER: '+4940556', TYPE: 2 });
    expect(later.status).toBe(200);
    expect(later.body.time.operating).toBeCloseTo(0.1);
  });

  it('reset clears the use; the performance can be changed at runtime and is checked', async () => {
    await call('user.current');
    portal.reset();
    expect((await control('operating')).body).toMatchObject({ methods: {}, refused: 0, commandMs: 100 });
    const changed = await control('performance', {
      commandMs: 0,
      operatingLimitSec: 480,
      operatingWindowSec: 600,
    });
    expect(changed.body).toEqual({ commandMs: 0, windowSec: 600, limitSec: 480, charge: 'run' });
    expect((await call('user.current')).body.time.operating).toBe(0);
    for (const [field, value] of [
      ['commandMs', -1],
      ['operatingLimitSec', 0],
      ['operatingWindowSec', 'ten'],
    ] as const) {
      const refused = await control('performance', { [field]: value });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toContain(field);
    }
    portal.setPerformance({ commandMs: 100, windowSec: 60, limitSec: 1 });
    expect(portal.operating()).toMatchObject({ commandMs: 100, windowSec: 60, limitSec: 1 });
  });
  it("an answer's figures count what other requests ran meanwhile (taken when each command ran)", async () => {
    const slow = batch(Object.fromEntries(Array.from({ length: 5 }, (_, n) => [`r_${n}`, register(n)])));
    // The quick batch goes once the slow one has arrived (its commands are in the run log), partway into it.
    await eventually(async () =>
      portal.operatingRuns().filter((run) => run.method === REGISTER).length >= 5 ? true : undefined,
    );
    // Partway into the slow batch: its commands run on real timers (commandMs) and nothing marks a midpoint.
    await new Promise((resolve) => setTimeout(resolve, 150));
    const quick = await batch({ r_q: register(50) });
    const answer = await slow;
    const slowTimes = Object.values(answer.body.result.result_time) as { finish: number }[];
    const quickTime = quick.body.result.result_time.r_q as { finish: number; operating: number };
    // Each figure counts every register that had run by the time its own command finished: 100 ms each.
    const ranBy = (finish: number) => slowTimes.filter((time) => time.finish <= finish).length;
    const before = ranBy(quickTime.finish);
    expect(before).toBeGreaterThanOrEqual(1);
    expect(quickTime.operating).toBeCloseTo(0.1 * (before + 1));
    const last = answer.body.result.result_time.r_4;
    expect(last.operating).toBeCloseTo(0.5 + (quickTime.finish <= last.finish ? 0.1 : 0));
    expect(answer.body.result.result_time.r_0.operating).toBeCloseTo(0.1);
  });

  it('the batch-upfront fault charges a batch whole on arrival to every method in it, refused commands too', async () => {
    await control('performance', { operatingCharge: 'batch-upfront' });
    try {
      const answer = await batch({ r_1: register(1), r_2: register(2), me: 'user.current' });
      // 3 commands × 100 ms, charged to register and to user.current alike, before any ran.
      expect(answer.body.result.result_time.r_1.operating).toBeCloseTo(0.3);
      expect(answer.body.result.result_time.me.operating).toBeCloseTo(0.3);
      // Over the 1-s limit after four such batches: the fifth is charged and refused.
      for (let n = 0; n < 3; n += 1) {
        await batch({ a: register(10 + n), b: register(20 + n), c: register(30 + n) });
      }
      const refused = await batch({ late: register(99) });
      expect(refused.body.result.result_error.late.error).toBe('OPERATION_TIME_LIMIT');
      const view = (await control('operating')).body;
      expect(view.charge).toBe('batch-upfront');
      expect(view.methods[REGISTER].usedSec).toBeCloseTo(1.3);
      expect(view.refusals[view.refusals.length - 1]).toMatchObject({ method: REGISTER, usedSec: 1.3 });
      expect((await control('performance', { operatingCharge: 'later' })).status).toBe(400);
    } finally {
      await control('performance', { operatingCharge: 'run' });
    }
  });

  it("another application's use counts in the method's figures and leaves with its bucket", async () => {
    const used = await control('operating/use', { method: REGISTER, sec: 0.5, agoSec: 55 });
    const { now } = (await control('clock', { advanceMs: 0 })).body;
    expect(used.body.usedSec).toBeCloseTo(0.5);
    // Charged 55 s ago: its bucket leaves a window after that, at the whole second: within 5 s.
    expect(used.body.resetAt).toBeLessThanOrEqual(now + 6000);
    const direct = await call(REGISTER, { USER_PHONE_INNER: '101', PHONE_NUMBER: '+4940557', TYPE: 2 });
    expect(direct.body.time.operating).toBeCloseTo(0.6);
    expect((await control('operating/use', { method: REGISTER, sec: -1 })).status).toBe(400);
  });

  /**
   * How the portal charges and counts, rule by rule. Moments come from the answers' own figures (a command
   * is charged when its run ends, its `finish`); the window is moved with the sandbox clock, read and
   * advanced in this process with nothing between, so no rule waits on real time.
   */
  describe('the charging rules', () => {
    const WINDOW_MS = 60_000;
    const TENTH_MS = 6000;
    /** Puts the sandbox clock `intoTenthMs` past the start of the next tenth of the window. */
    const toTenth = (intoTenthMs: number) => {
      const now = portal.advanceClock(0);
      portal.advanceClock(TENTH_MS - (now % TENTH_MS) + intoTenthMs);
    };
    /** Moves the sandbox clock to `offsetMs` from the moment `at` (ms) and reads the method's use there. */
    const useAt = (method: string, at: number, offsetMs: number) => {
      const now = portal.advanceClock(0);
      portal.advanceClock(Math.max(0, at + offsetMs - now));
      return portal.operating().methods[method];
    };
    const registerCall = (n: number) =>
      call(REGISTER, {
        USER_PHONE_INNER: '101',
        PHONE_NUMBER: `+4940${2000000 + n}`,
        TYPE: 2,
        CRM_CREATE: 0,
      });

    it('the outer batch is not charged: only its commands are, each to its own method', async () => {
      const answer = await batch({ r_1: register(1), me: 'user.current' });
      expect(answer.body.time.operating).toBe(0);
      // With no use, the reset is a window from the answer's second.
      expect(answer.body.time.operating_reset_at).toBe(Math.floor(answer.body.time.finish) + 60);
      const { methods } = portal.operating();
      expect(methods.batch).toBeUndefined();
      expect(methods[REGISTER].usedSec).toBeCloseTo(0.1);
      expect(methods['user.current'].usedSec).toBeCloseTo(0.1);
    });

    it('each command is charged to its own method when its own turn ends, not when the batch does', async () => {
      toTenth(100);
      const answer = await batch({ r_1: register(1), r_2: register(2), r_3: register(3) });
      const times = answer.body.result.result_time;
      // One after another: each figure counts the commands whose run had ended by its own end.
      expect(times.r_2.start).toBeCloseTo(times.r_1.finish);
      expect(times.r_1.operating).toBeCloseTo(0.1);
      expect(times.r_2.operating).toBeCloseTo(0.2);
      expect(times.r_3.operating).toBeCloseTo(0.3);
      // All three in one bucket, opened by the first command's charge, at its end.
      expect(times.r_3.operating_reset_at).toBe(Math.floor(times.r_1.finish) + 60);
    });

    it('a bucket opens with the first use in its tenth and leaves whole a window after it, at the whole second', async () => {
      // Mid-tenth: a bucket aligned on the clock would leave at the tenth's start plus a window.
      toTenth(3000);
      const first = await registerCall(1);
      const second = await registerCall(2);
      const opened = first.body.time.finish * 1000;
      const leaves = Math.floor(opened / 1000) * 1000 + WINDOW_MS;
      expect(leaves % TENTH_MS).not.toBe(0);
      expect(second.body.time.operating).toBeCloseTo(0.2);
      expect(second.body.time.operating_reset_at * 1000).toBe(leaves);
      // The next tenth's first use opens a second bucket; the oldest still names the reset.
      toTenth(10);
      const third = await registerCall(3);
      expect(third.body.time.operating).toBeCloseTo(0.3);
      expect(third.body.time.operating_reset_at * 1000).toBe(leaves);
      const thirdLeaves = Math.floor(third.body.time.finish) * 1000 + WINDOW_MS;
      // Just before its whole second the first bucket counts; at it, it leaves whole (the second call's
      // use, charged later, leaves with it), and the reset is the next bucket's.
      expect(useAt(REGISTER, leaves, -20).usedSec).toBeCloseTo(0.3);
      expect(useAt(REGISTER, leaves, 0)).toMatchObject({ usedSec: 0.1, resetAt: thirdLeaves });
      expect(useAt(REGISTER, thirdLeaves, 0)).toMatchObject({ usedSec: 0 });
    });

    it("an answer's time.operating is the method's live buckets with this call; operating_reset_at the oldest's leaving", async () => {
      // Another application's use in an older bucket, still live; and some that has left.
      await control('operating/use', { method: REGISTER, sec: 0.3, agoSec: 30 });
      await control('operating/use', { method: REGISTER, sec: 0.2, agoSec: 70 });
      const before = portal.operating().methods[REGISTER];
      const direct = await registerCall(4);
      // 0.3 live + this call's own 0.1 (charged when it ended, before its answer).
      expect(direct.body.time.operating).toBeCloseTo(0.4);
      expect(direct.body.time.operating_reset_at * 1000).toBe(before.resetAt);
      expect(before.resetAt - portal.advanceClock(0)).toBeLessThanOrEqual(31_000);
    });

    it('a call is checked before it runs: the call that crosses the limit completes, the next is refused', async () => {
      // 0.95 s of the 1-s limit used: the first register runs (0.95 → 1.05), the second is refused.
      await control('operating/use', { method: REGISTER, sec: 0.95 });
      const answer = await batch({ r_1: register(1), r_2: register(2), me: 'user.current' });
      expect(answer.status).toBe(200);
      expect(answer.body.result.result.r_1).toBeDefined();
      expect(answer.body.result.result_time.r_1.operating).toBeCloseTo(1.05);
      expect(answer.body.result.result_error.r_2).toEqual({
        error: 'OPERATION_TIME_LIMIT',
        error_description: 'Method is blocked due to operation time limit.',
      });
      // The refusal says the count and when its oldest use leaves.
      expect(answer.body.result.result_time.r_2.operating).toBeCloseTo(1.05);
      expect(answer.body.result.result.me).toMatchObject({ ID: '1' });
      const direct = await registerCall(5);
      expect(direct.status).toBe(429);
      expect(direct.body).toMatchObject({ error: 'OPERATION_TIME_LIMIT' });
      expect(direct.body.time.operating).toBeCloseTo(1.05);
      expect(portal.operating().refused).toBe(2);
    });

    it('batch-whole (the other reading): the whole batch is charged to batch when it ends, and batch is blocked', async () => {
      portal.setPerformance({ charge: 'batch-whole' });
      const answer = await batch({ r_1: register(1), r_2: register(2), me: 'user.current' });
      // The batch's own figure: its three commands' server time, charged when it ended.
      expect(answer.body.time.operating).toBeCloseTo(0.3);
      expect(answer.body.time.operating_reset_at).toBe(Math.floor(answer.body.time.finish) + 60);
      // Its commands are charged to no method of their own.
      expect(answer.body.result.result_time.r_2.operating).toBe(0);
      expect(portal.operating().methods).toEqual({
        batch: expect.objectContaining({ usedSec: 0.3, blocked: false }),
      });
      // 0.75 s more: 1.05 s, over the limit once that batch has run; the next batch is refused whole.
      await control('operating/use', { method: 'batch', sec: 0.65 });
      const crossing = await batch({ r_3: register(3) });
      expect(crossing.status).toBe(200);
      expect(crossing.body.time.operating).toBeCloseTo(1.05);
      const ranBefore = portal.operating().ran[REGISTER];
      const refused = await batch({ r_4: register(4), r_5: register(5) });
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ error: 'OPERATION_TIME_LIMIT' });
      expect(refused.body.time.operating).toBeCloseTo(1.05);
      expect(portal.operating().ran[REGISTER]).toBe(ranBefore);
      expect(portal.operating()).toMatchObject({ refused: 2, methods: { batch: { blocked: true } } });
      // A direct call is charged to its own method, which has room.
      const direct = await registerCall(6);
      expect(direct.status).toBe(200);
      expect(direct.body.time.operating).toBeCloseTo(0.1);
    });
  });
});
