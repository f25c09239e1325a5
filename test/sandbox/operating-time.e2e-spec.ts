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

  it('a direct call reports its method use in time.operating, growing by the server time of each call', async () => {
    const before = Date.now();
    const first = await call('user.current');
    const second = await call('user.current');
    expect(first.status).toBe(200);
    expect(first.body.time.operating).toBeCloseTo(0.1);
    expect(second.body.time.operating).toBeCloseTo(0.2);
    expect(second.body.time.duration).toBeCloseTo(0.1);
    // The first charge's bucket (a tenth of the window, aligned on the clock) leaves a window after it began:
    // between 54 and 60 s after the charge, reported in whole seconds.
    const resetAt = second.body.time.operating_reset_at;
    expect(resetAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) + 53);
    expect(resetAt).toBeLessThanOrEqual(Date.now() / 1000 + 61);
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
    // The batch's own time is its whole server time, and the most any of its methods has used.
    expect(answer.body.time.duration).toBeCloseTo(0.3);
    expect(answer.body.time.operating).toBeCloseTo(0.2);
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
  it('frees use a tenth of the window at a time: a bucket leaves whole, a window after it began', async () => {
    // Both calls in one 6-s bucket: the clock moved to just past a boundary first (two calls started at a
    // random moment straddle one about once in thirty runs, and the later bucket's use outlives the first).
    const { now: start } = (await control('clock', { advanceMs: 0 })).body;
    await control('clock', { advanceMs: 6000 - (start % 6000) + 10 });
    await call('user.current');
    await call('user.current');
    const view = (await control('operating')).body;
    const { usedSec, resetAt } = view.methods['user.current'];
    expect(usedSec).toBeCloseTo(0.2);
    // The bucket leaves at a bucket boundary, a window after it began.
    expect(resetAt % 6000).toBe(0);
    const { now } = (await control('clock', { advanceMs: 0 })).body;
    await control('clock', { advanceMs: resetAt - now - 300 });
    expect((await control('operating')).body.methods['user.current'].usedSec).toBeGreaterThan(0);
    // A moment after its boundary the whole bucket has left (not each call a window after it was charged).
    await control('clock', { advanceMs: 400 });
    expect((await control('operating')).body.methods['user.current'].usedSec).toBe(0);
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
    // Charged 55 s ago: its bucket leaves within 5 s (a bucket is 6 s).
    expect(used.body.resetAt).toBeLessThanOrEqual(now + 6000);
    const direct = await call(REGISTER, { USER_PHONE_INNER: '101', PHONE_NUMBER: '+4940557', TYPE: 2 });
    expect(direct.body.time.operating).toBeCloseTo(0.6);
    expect((await control('operating/use', { method: REGISTER, sec: -1 })).status).toBe(400);
  });
});
