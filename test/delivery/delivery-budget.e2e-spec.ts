import { eventually, Harness, PBX_TOKEN, startHarness } from '../support/bridge-harness';
import { sandboxCalls, sandboxStats } from '../support/sandbox-inspect';

/** A 1000-call burst at the default budget (2/s, burst 50) drains with zero 503s from the portal. */
describe('delivery within the portal budget', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({ PBX_RATE_LIMIT_RPS: '1000' });
  });
  afterAll(async () => {
    await h.close();
  });

  it('drains 1000 calls with recordings without a single QUERY_LIMIT_EXCEEDED, each command sent once', async () => {
    const bodies = Array.from({ length: 20 }, (_, chunk) =>
      Array.from({ length: 50 }, (_, index) => {
        const n = chunk * 50 + index;
        return [
          {
            event: 'call.started',
            callId: `burst-${n}`,
            direction: n % 2 ? 'inbound' : 'outbound',
            phoneNumber: `+4930${String(5000000 + n)}`,
            extension: '101',
            at: '2026-11-22T10:00:00+01:00',
          },
          {
            event: 'call.ended',
            callId: `burst-${n}`,
            at: '2026-11-22T10:01:00+01:00',
            durationSec: 60,
            status: 'answered',
            recordingUrl: `https://pbx.example.com/rec/${n}.mp3`,
          },
        ];
      }).flat(),
    );
    for (const body of bodies) {
      const response = await h.http
        .post('/v1/calls/events')
        .set('Authorization', `Bearer ${PBX_TOKEN}`)
        .send(body);
      expect(response.status).toBe(202);
    }
    const delivered = await eventually(async () => {
      const calls = (await sandboxCalls(h.sandbox)).filter((call) =>
        call.EXTERNAL_CALL_ID?.startsWith('burst-'),
      );
      const done = calls.filter((call) => call.finished && call.records.length > 0);
      return done.length === 1000 ? calls : undefined;
    }, 120000);
    expect(delivered).toHaveLength(1000);
    // No command went twice (two batches in flight never share a call): one register, one recording each.
    expect(delivered.filter((call) => call.registerRequests !== 1)).toEqual([]);
    expect(delivered.filter((call) => call.records.length !== 1)).toEqual([]);
    const stats = await sandboxStats(h.sandbox);
    expect(stats.queryLimitExceeded).toBe(0);
    expect(stats.byStatus['503'] ?? 0).toBe(0);
  });
});
