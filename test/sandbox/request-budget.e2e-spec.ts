import { SandboxPortal } from '../../sandbox';
import { request } from './http';

describe('sandbox portal: request budget (leaky bucket)', () => {
  let portal: SandboxPortal;

  beforeAll(async () => {
    portal = await SandboxPortal.start();
  });
  afterAll(() => portal.close());
  beforeEach(() => portal.reset());

  it('answers 503 QUERY_LIMIT_EXCEEDED to the requests of a 60-request burst that pass the bucket of 50', async () => {
    const answers = await Promise.all(
      Array.from({ length: 60 }, () => request(`${portal.webhookUrl}profile`)),
    );
    const limited = answers.filter((answer) => answer.status === 503);
    const served = answers.filter((answer) => answer.status === 200);
    // The bucket drains 2 per second while the burst arrives, so one or two more may fit.
    expect(limited.length).toBeGreaterThanOrEqual(8);
    expect(limited.length).toBeLessThanOrEqual(10);
    expect(served.length + limited.length).toBe(60);
    expect(limited[0].body).toEqual({
      error: 'QUERY_LIMIT_EXCEEDED',
      error_description: 'Too many requests',
    });
    const stats = portal.stats();
    expect(stats.queryLimitExceeded).toBe(limited.length);
    expect(stats.byStatus).toEqual({ 200: served.length, 503: limited.length });
    expect(stats.requests).toBe(60);
    expect(stats.commands).toBe(served.length);
  });

  it('counts a batch of many commands as one request', async () => {
    const cmd = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`u${i}`, 'user.current']));
    const answers = [];
    for (let i = 0; i < 3; i += 1) {
      answers.push(await request(`${portal.webhookUrl}batch`, { json: { halt: 0, cmd } }));
    }
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect((await request(`${portal.url}/_sandbox/budget`)).body).toEqual({
      level: expect.any(Number),
      ratePerSecond: 2,
      burst: 50,
    });
    expect(portal.inspection.budget().level).toBeLessThanOrEqual(3);
    expect(portal.stats().commands).toBe(150);
    expect(portal.requests().map((entry) => [entry.method, entry.commands])).toEqual([
      ['batch', 50],
      ['batch', 50],
      ['batch', 50],
    ]);
  });

  it('adds nothing for refused requests, and does not count /oauth or /_sandbox requests', async () => {
    const small = await SandboxPortal.start({ rateLimitRps: 0.001, rateBurst: 3 });
    try {
      const statuses = [];
      for (let i = 0; i < 6; i += 1) statuses.push((await request(`${small.webhookUrl}profile`)).status);
      expect(statuses).toEqual([200, 200, 200, 503, 503, 503]);
      expect(small.inspection.budget().level).toBeCloseTo(3, 1);
      await request(`${small.url}/oauth/token/`, { form: { grant_type: 'refresh_token' } });
      await request(`${small.url}/_sandbox/stats`);
      expect(small.inspection.budget().level).toBeCloseTo(3, 1);
      expect(small.stats().requests).toBe(6);
    } finally {
      await small.close();
    }
  });

  it('lets the bucket drain continuously at the configured rate', async () => {
    const fast = await SandboxPortal.start({ rateLimitRps: 4, rateBurst: 1 });
    try {
      expect((await request(`${fast.webhookUrl}profile`)).status).toBe(200);
      // 300 ms of drain at 4/s is 1.2 requests, on the sandbox's clock: within the second, room again.
      fast.advanceClock(300);
      expect((await request(`${fast.webhookUrl}profile`)).status).toBe(200);
    } finally {
      await fast.close();
    }
  });

  it('starts with an empty bucket after a reset', async () => {
    const small = await SandboxPortal.start({ rateLimitRps: 0.001, rateBurst: 1 });
    try {
      expect((await request(`${small.webhookUrl}profile`)).status).toBe(200);
      expect((await request(`${small.webhookUrl}profile`)).status).toBe(503);
      expect((await request(`${small.url}/_sandbox/reset`, { method: 'POST' })).status).toBe(200);
      expect((await request(`${small.webhookUrl}profile`)).status).toBe(200);
    } finally {
      await small.close();
    }
  });
});
