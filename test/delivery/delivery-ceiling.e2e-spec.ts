import { eventually, Harness, PBX_TOKEN, startHarness } from '../support/bridge-harness';
import { sandboxCalls, sandboxStats } from '../support/sandbox-inspect';

/**
 * Delivery against a portal that is slow and limits server time (how real portals behave "Errors"): batches in flight
 * sized by the answer time, and each method kept under the operating-time limit.
 */
describe('delivery at the ceiling of a slow, time-limited portal', () => {
  let h: Harness | undefined;

  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  function callEvents(prefix: string, count: number, recordingEvery = 0) {
    return Array.from({ length: count }, (_, n) => [
      {
        event: 'call.started',
        callId: `${prefix}-${n}`,
        direction: 'inbound',
        phoneNumber: `+4930${String(6000000 + n)}`,
        extension: '101',
        at: '2026-11-24T10:00:00+01:00',
      },
      {
        event: 'call.ended',
        callId: `${prefix}-${n}`,
        at: '2026-11-24T10:01:00+01:00',
        durationSec: 60,
        status: 'answered',
        ...(recordingEvery && n % recordingEvery === 0
          ? { recordingUrl: `https://pbx.example.com/rec/${prefix}-${n}.mp3` }
          : {}),
      },
    ]).flat();
  }

  async function post(events: object[]) {
    for (let start = 0; start < events.length; start += 100) {
      const response = await h!.http
        .post('/v1/calls/events')
        .set('Authorization', `Bearer ${PBX_TOKEN}`)
        .send(events.slice(start, start + 100));
      expect(response.status).toBe(202);
    }
  }

  /** The calls' recordings expected: every `recordingEvery`-th call has one. */
  const recordingsOf = (externalId: string, recordingEvery: number) =>
    recordingEvery && Number(externalId.split('-').pop()) % recordingEvery === 0 ? 1 : 0;

  async function delivered(prefix: string, count: number, timeoutMs: number, recordingEvery = 0) {
    return eventually(async () => {
      const calls = (await sandboxCalls(h!.sandbox)).filter((call) =>
        call.EXTERNAL_CALL_ID?.startsWith(`${prefix}-`),
      );
      const done = calls.filter(
        (call) =>
          call.finished && call.records.length >= recordingsOf(call.EXTERNAL_CALL_ID!, recordingEvery),
      );
      return done.length === count ? calls : undefined;
    }, timeoutMs);
  }

  it('a slow portal (2 s a batch): more than two batches in flight, each call in one at a time, no 503', async () => {
    h = await startHarness(
      { PBX_RATE_LIMIT_RPS: '1000', B24_RATE_BURST: '10', B24_TIMEOUT_MS: '15000' },
      { rateBurst: 10, commandMs: 40 },
    );
    await post(callEvents('slow', 300, 10));
    const calls = await delivered('slow', 300, 120_000, 10);
    expect(calls).toHaveLength(300);
    // Every register went once, every recording once: no call was in two requests at the same time.
    expect(calls.filter((call) => call.registerRequests !== 1)).toEqual([]);
    expect(calls.filter((call) => call.records.length !== recordingsOf(call.EXTERNAL_CALL_ID!, 10))).toEqual(
      [],
    );
    const stats = await sandboxStats(h.sandbox);
    expect(stats.queryLimitExceeded).toBe(0);
    // The portal's log: each request is busy for its commands × 40 ms from its arrival; more than two of
    // them overlapped (the old loop kept two in flight whatever the answer time).
    const log: { at: number; commands: number; method: string }[] = h.sandbox
      .requests()
      .filter((entry) => entry.method === 'batch');
    const edges = log.flatMap((entry) => [
      [entry.at, 1],
      [entry.at + entry.commands * 40, -1],
    ]);
    edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let open = 0;
    let most = 0;
    for (const [, change] of edges) {
      open += change;
      most = Math.max(most, open);
    }
    expect(most).toBeGreaterThan(2);
  });

  it('keeps each method under the operating-time limit: every call delivered, no OPERATION_TIME_LIMIT', async () => {
    // A 10-s window allowing 2 s of server time per method: 100 commands of 20 ms per method per window.
    h = await startHarness(
      {
        PBX_RATE_LIMIT_RPS: '1000',
        B24_OPERATING_WINDOW_SEC: '10',
        B24_OPERATING_LIMIT_SEC: '2',
      },
      { commandMs: 20, operatingWindowSec: 10, operatingLimitSec: 2 },
    );
    // 180 registers and 180 finishes: almost twice what one window allows each method.
    await post(callEvents('paced', 180));
    const calls = await delivered('paced', 180, 120_000);
    expect(calls.filter((call) => call.registerRequests !== 1)).toEqual([]);
    const stats = await sandboxStats(h.sandbox);
    expect(stats.operationTimeLimited).toBe(0);
    expect(stats.queryLimitExceeded).toBe(0);
    // The bridge knew where each method stood: its estimate is in the health details.
    const health = await h.http.get('/health/ready');
    const operating: { method: string; usedSec: number; limitSec: number }[] =
      health.body.details.portal.operatingTime;
    const register = operating.find((use) => use.method === 'telephony.externalcall.register');
    expect(register).toMatchObject({ limitSec: 2 });
    expect(register!.usedSec).toBeLessThanOrEqual(2);
  });

  it('on a portal that charges batches whole to `batch`, keeps batch under its limit: every call delivered', async () => {
    // The other reading of the portal's rules: a batch's whole server time is charged to `batch`, which
    // is what gets blocked. 2 s in a 10-s window: 100 commands of 20 ms a window, whatever their methods.
    h = await startHarness(
      {
        PBX_RATE_LIMIT_RPS: '1000',
        B24_OPERATING_WINDOW_SEC: '10',
        B24_OPERATING_LIMIT_SEC: '2',
      },
      { commandMs: 20, operatingWindowSec: 10, operatingLimitSec: 2, operatingCharge: 'batch-whole' },
    );
    // 120 registers and 120 finishes: more than twice what one window allows.
    await post(callEvents('whole', 120));
    const calls = await delivered('whole', 120, 120_000);
    expect(calls.filter((call) => call.registerRequests !== 1)).toEqual([]);
    const stats = await sandboxStats(h.sandbox);
    expect(stats.operationTimeLimited).toBe(0);
    // The bridge followed `batch` as the portal counts it.
    const health = await h.http.get('/health/ready');
    const operating: { method: string; usedSec: number; limitSec: number }[] =
      health.body.details.portal.operatingTime;
    expect(operating.find((use) => use.method === 'batch')).toMatchObject({ limitSec: 2 });
  });
});
