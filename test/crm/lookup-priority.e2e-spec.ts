import { PortalRuntime } from '../../src/tenancy/portal-runtime';
import { RequestLogEntry } from '../../sandbox';
import { eventually, Harness, PBX_TOKEN, startHarness } from '../support/bridge-harness';
import { sandboxCalls } from '../support/sandbox-inspect';

/**
 * A backlog of 24 batches at 2 requests/s (12 s): the lookup must reach the portal while the backlog still
 * drains on a machine loaded enough to slow the bridge by seconds, so the backlog is what grows, not any
 * allowance; what is asserted is the order in the portal's request log, never a time.
 */
const CALLS = 600;
const QUEUED_BACKGROUND = 6;
/** A lookup is one batch of findbycomm and three lists; delivery batches are full (50) while a backlog waits. */
const LOOKUP_COMMANDS = 4;

const byArrival = (entries: RequestLogEntry[]) => [...entries].sort((a, b) => a.at - b.at);
const isDelivery = (entry: RequestLogEntry) => entry.method === 'batch' && entry.commands > LOOKUP_COMMANDS;

/**
 * A lookup for a ringing call goes ahead of background work: with a delivery backlog and more background
 * requests waiting on a small request budget (2/s, room for 2), the lookup's request reaches the portal
 * before the background requests queued ahead of it, and delivery goes on after it.
 */
describe('lookups ahead of the delivery backlog', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness(
      {
        B24_RATE_LIMIT_RPS: '2',
        B24_RATE_BURST: '3',
        PBX_RATE_LIMIT_RPS: '1000',
        // Generous: the order in the request log is what is asserted, not the time.
        LOOKUP_DEADLINE_MS: '20000',
      },
      // The portal's bucket holds one request more than the bridge's. It counts a request once its body
      // has been read, and the bridge, the portal and the store share this process's one thread: on a
      // loaded machine a delivery batch granted before the lookup can be counted a moment after it, and
      // with two equal buckets that moment alone got the lookup's request a 503 (match null, "the portal
      // could not be asked"). The order of arrival is what is asserted; one request of slack absorbs that
      // jitter, and a bridge overrunning its budget by more than that still draws the 503s the last check
      // forbids.
      { rateLimitRps: 2, rateBurst: 4 },
    );
  });
  afterAll(async () => {
    await h.close();
  });

  it('answers a lookup before the backlog drains', async () => {
    const events = Array.from({ length: CALLS }, (_, n) => [
      {
        event: 'call.started',
        callId: `backlog-${n}`,
        direction: 'inbound',
        phoneNumber: `+4930${String(7000000 + n)}`,
        extension: '101',
        at: '2026-11-22T10:00:00+01:00',
      },
      {
        event: 'call.ended',
        callId: `backlog-${n}`,
        at: '2026-11-22T10:01:00+01:00',
        durationSec: 60,
        status: 'answered',
      },
    ]).flat();
    for (let offset = 0; offset < events.length; offset += 500) {
      await h.http
        .post('/v1/calls/events')
        .set('Authorization', `Bearer ${PBX_TOKEN}`)
        .send(events.slice(offset, offset + 500))
        .expect(202);
    }
    // The backlog is draining: the budget's room is used up and delivery waits for it.
    await eventually(async () => (h.sandbox.requests().filter(isDelivery).length >= 3 ? true : undefined));
    // More background work queues behind delivery (as the employee directory's reads do).
    const queuedAt = Date.now();
    const client = h.app.get(PortalRuntime).client;
    const background = Array.from({ length: QUEUED_BACKGROUND }, () =>
      client.call('user.get', { FILTER: { ID: 2 } }, { priority: 'background' }),
    );

    const response = await h.http
      .get('/v1/lookup')
      .query({ phone: '+49 151 1234-5678' })
      .set('Authorization', `Bearer ${PBX_TOKEN}`)
      .expect(200);
    // The whole body: a miss shows its reason (seen once under four workers: match null).
    expect(response.body).toMatchObject({ match: { entityType: 'CONTACT', entityId: 1 } });

    await Promise.all(background);
    const drained = await eventually(async () => {
      const calls = await sandboxCalls(h.sandbox);
      return calls.filter((call) => call.finished).length === CALLS ? true : undefined;
    }, 60000);
    expect(drained).toBe(true);

    const log = byArrival(h.sandbox.requests());
    const lookupAt = log.findIndex((entry) => entry.method === 'batch' && entry.commands === LOOKUP_COMMANDS);
    expect(lookupAt).toBeGreaterThan(0);
    const after = log.slice(lookupAt + 1);
    // The lookup went ahead of the background requests queued before it (one may have been granted
    // before the lookup reached the budget) ...
    const queuedBehind = after.filter((entry) => entry.method === 'user.get' && entry.at >= queuedAt).length;
    expect(queuedBehind).toBeGreaterThanOrEqual(QUEUED_BACKGROUND - 1);
    // ... and did not wait for the delivery backlog either: it reached the portal with the backlog still
    // draining. (When its answer reached the test is this machine's load: the bridge, the portal and the
    // store share one thread here, and a loaded run answered it after the last delivery batch.)
    expect(after.filter(isDelivery).length).toBeGreaterThanOrEqual(3);
    expect(log.filter((entry) => entry.status === 503)).toEqual([]);
  });
});

/** The wait for the budget counts towards the deadline: a lookup that gets no room in time gives up its place. */
describe('a lookup waiting for the budget past its deadline', () => {
  let h: Harness;

  beforeAll(async () => {
    // Room for one request, then one every 10 s: the directory's first read takes it at start-up.
    h = await startHarness({ B24_RATE_LIMIT_RPS: '0.1', B24_RATE_BURST: '1', LOOKUP_DEADLINE_MS: '1000' });
    await eventually(async () => (h.app.get(PortalRuntime).directory.loaded ? true : undefined));
  });
  afterAll(async () => {
    await h.close();
  });

  it('answers match null with the reason, and leaves the queue without sending anything', async () => {
    const requestsBefore = h.sandbox.requests().length;
    const response = await h.http
      .get('/v1/lookup')
      .query({ phone: '+49 151 1234-5678' })
      .set('Authorization', `Bearer ${PBX_TOKEN}`)
      .expect(200);
    expect(response.body).toEqual({
      phone: '+4915112345678',
      match: null,
      reason: 'the portal did not answer within 1000 ms (the caller gave up waiting for the request budget)',
    });
    expect(h.app.get(PortalRuntime).client.budget.snapshot().waiting).toBe(0);
    expect(h.sandbox.requests()).toHaveLength(requestsBefore);
  });
});
