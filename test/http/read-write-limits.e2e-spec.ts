import { callBodies, Harness, PBX_TOKEN, startHarness } from '../support/bridge-harness';

const auth = { Authorization: `Bearer ${PBX_TOKEN}` };

/**
 * Issue 26 finding 6: a PBX's reads (call status, lookups) and writes (posts) have limits of their own,
 * PBX_READ_RATE_LIMIT_RPS and PBX_RATE_LIMIT_RPS, so a PBX checking the status of what it just posted is not
 * refused. Through HTTP into the bridge, on the real store.
 */
describe('PBX reads and writes are limited apart', () => {
  let harness: Harness | undefined;

  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  async function postCalls(prefix: string, count: number): Promise<number[]> {
    const statuses: number[] = [];
    for (const body of callBodies(prefix, count)) {
      statuses.push((await harness!.http.post('/v1/calls/events').set(auth).send(body)).status);
    }
    return statuses;
  }

  it('with the default limits, reading the status of 400 calls just posted, all at once, is never refused', async () => {
    harness = await startHarness();
    expect(new Set(await postCalls('reads', 400))).toEqual(new Set([202]));
    const statuses = await Promise.all(
      Array.from({ length: 400 }, (_, index) =>
        harness!.http
          .get(`/v1/calls/reads-${index}`)
          .set(auth)
          .then((response) => response.status),
      ),
    );
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
  });

  it('a low write limit leaves reads alone: they have their own (PBX_READ_RATE_LIMIT_RPS)', async () => {
    harness = await startHarness({ PBX_RATE_LIMIT_RPS: '5' });
    expect(new Set(await postCalls('lowwrite', 30))).toEqual(new Set([202]));
    const reads = await Promise.all(
      Array.from({ length: 30 }, (_, index) => harness!.http.get(`/v1/calls/lowwrite-${index}`).set(auth)),
    );
    expect(reads.filter((response) => response.status !== 200)).toEqual([]);
  });

  it('reads past PBX_READ_RATE_LIMIT_RPS get 429 with Retry-After, while writes are still taken', async () => {
    harness = await startHarness({ PBX_READ_RATE_LIMIT_RPS: '5', PBX_RATE_LIMIT_RPS: '1000' });
    expect(new Set(await postCalls('lowread', 10))).toEqual(new Set([202]));
    const reads = await Promise.all(
      Array.from({ length: 30 }, () => harness!.http.get('/v1/calls/lowread-0').set(auth)),
    );
    const refused = reads.filter((response) => response.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(Number(refused[0].headers['retry-after'])).toBeGreaterThan(0);
    const [write] = callBodies('after', 1);
    expect((await harness.http.post('/v1/calls/events').set(auth).send(write)).status).toBe(202);
  });
});
