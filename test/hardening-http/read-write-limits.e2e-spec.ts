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

  it('reads spend none of the write budget, and writes none of the read budget', async () => {
    harness = await startHarness({ PBX_RATE_LIMIT_RPS: '5', PBX_READ_RATE_LIMIT_RPS: '5' });
    // Writes: the sixth post within a second is refused...
    const writes = await Promise.all(
      callBodies('split', 80).map((body) =>
        harness!.http
          .post('/v1/calls/events')
          .set(auth)
          .send(body)
          .then((response) => response.status),
      ),
    );
    expect(writes.filter((status) => status === 202).length).toBeGreaterThanOrEqual(1);
    expect(writes.filter((status) => status === 429).length).toBeGreaterThanOrEqual(1);
    // ...yet reads right after go through on their own budget.
    const accepted = writes.flatMap((status, request) => (status === 202 ? [request * 10] : []));
    const reads = await Promise.all(
      accepted.slice(0, 5).map((first) =>
        harness!.http
          .get(`/v1/calls/split-${first}`)
          .set(auth)
          .then((response) => response.status),
      ),
    );
    expect(reads).toEqual(reads.map(() => 200));

    // Reads past their own limit get 429 with Retry-After; a write right after is still taken.
    const burst = await Promise.all(
      Array.from({ length: 20 }, () => harness!.http.get(`/v1/calls/split-0`).set(auth)),
    );
    const refused = burst.filter((response) => response.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(Number(refused[0].headers['retry-after'])).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await Promise.all(
      Array.from({ length: 20 }, () =>
        harness!.http.get(`/v1/lookup`).query({ phone: '+4930123456' }).set(auth),
      ),
    );
    const [write] = callBodies('after', 1);
    expect((await harness.http.post('/v1/calls/events').set(auth).send(write)).status).toBe(202);
  });
});
