import { Harness, PBX_TOKEN, startHarness } from '../support/bridge-harness';
import { clearFaults, injectFault } from '../support/sandbox-inspect';
import { recordedLookups } from './crm-support';

const DEADLINE_MS = 1000;
/** Far longer than the deadline: a lookup that waited for the portal would take this long. */
const PORTAL_LATENCY_MS = 10_000;

/** The portal down, slow or refusing: cached answers are still served, misses answer null in time. */
describe('GET /v1/lookup when the portal fails', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({
      LOOKUP_DEADLINE_MS: String(DEADLINE_MS),
      LOOKUP_CACHE_TTL_SEC: '1',
      B24_TIMEOUT_MS: String(PORTAL_LATENCY_MS * 2),
    });
  });
  afterAll(async () => {
    await h.close();
  });
  afterEach(async () => {
    await clearFaults(h.sandbox);
  });

  const lookup = (phone: string) =>
    h.http.get('/v1/lookup').query({ phone }).set('Authorization', `Bearer ${PBX_TOKEN}`).expect(200);
  // The cache's TTL runs on the bridge's own clock (not injectable end to end): waiting past it cannot flake.
  const expired = () => new Promise((resolve) => setTimeout(resolve, 1200));
  /** The portal answered nothing that arrived since `since`: whatever the bridge sent it is still held back. */
  const portalStillSilent = (since: number) => expect(h.sandbox.requests(since)).toEqual([]);

  it('serves a cached answer while the portal is down, also once its TTL has passed', async () => {
    const first = await lookup('+49 151 1234-5678');
    expect(first.body.match).toMatchObject({ entityType: 'CONTACT', entityId: 1 });
    await injectFault(h.sandbox, { kind: 'outage' });
    expect((await lookup('0151 12345678')).body).toEqual(first.body);
    await expired();
    expect((await lookup('0151 12345678')).body).toEqual(first.body);
  });

  it('answers a miss with match null and the reason while the portal is down', async () => {
    await injectFault(h.sandbox, { kind: 'outage' });
    const response = await lookup('+44 20 7946 0958');
    expect(response.body).toEqual({
      phone: '+442079460958',
      match: null,
      reason: expect.stringMatching(/^the portal could not be asked: .*no answer from the portal/),
    });
  });

  it('answers a miss with match null at the deadline when the portal is slow, not when it answers', async () => {
    await injectFault(h.sandbox, { kind: 'latency', ms: PORTAL_LATENCY_MS });
    const before = await recordedLookups(h.http);
    const startedAt = h.sandbox.state.now();
    const response = await lookup('+49 170 5550101');
    portalStillSilent(startedAt);
    expect(response.body).toEqual({
      phone: '+491705550101',
      match: null,
      reason: `the portal did not answer within ${DEADLINE_MS} ms (the caller gave up waiting for the answer)`,
    });
    const after = await recordedLookups(h.http);
    expect(after.count).toEqual({ ...before.count, deadline: before.count.deadline + 1 });
    // The whole wait is observed: at least half the deadline (a lower bound never flakes on a slow machine).
    expect(after.seconds.deadline - before.seconds.deadline).toBeGreaterThan(DEADLINE_MS / 2 / 1000);
  });

  it('serves an expired answer when the portal is slow past the deadline', async () => {
    const first = await lookup('+49 89 1234 5600');
    expect(first.body.match).toMatchObject({ entityType: 'COMPANY', entityId: 1 });
    await expired();
    await injectFault(h.sandbox, { kind: 'latency', ms: PORTAL_LATENCY_MS });
    const startedAt = h.sandbox.state.now();
    expect((await lookup('+49 89 1234 5600')).body).toEqual(first.body);
    portalStillSilent(startedAt);
  });

  it("answers match null with the portal's words when it refuses the search", async () => {
    await injectFault(h.sandbox, {
      kind: 'http',
      status: 403,
      error: 'ACCESS_DENIED',
      method: 'crm.duplicate.findbycomm',
      times: 1,
    });
    const response = await lookup('+49 40 5550199');
    expect(response.body).toEqual({
      phone: '+49405550199',
      match: null,
      reason: 'the portal could not be asked: ACCESS_DENIED: Access denied!',
    });
  });

  it('finds the client again once the portal is back, and does not cache the failure', async () => {
    await injectFault(h.sandbox, { kind: 'outage' });
    expect((await lookup('+49 30 98765432')).body.match).toBeNull();
    await clearFaults(h.sandbox);
    const response = await lookup('+49 30 98765432');
    expect(response.body).toEqual({
      phone: '+493098765432',
      match: {
        entityType: 'CONTACT',
        entityId: 2,
        name: 'Erika Musterfrau',
        responsibleUserId: 3,
        responsibleExtension: '102',
      },
    });
  });
});
