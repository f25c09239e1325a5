import { eventually, Harness, PBX_TOKEN, startHarness } from '../support/bridge-harness';

/** Probes, metrics, request ids and the OpenAPI document, through HTTP on the real app. */
describe('operations', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  const metric = (text: string, name: string, labels: Record<string, string> = {}) => {
    const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
    const line = text
      .split('\n')
      .find((row) =>
        row.startsWith(`${name}{`) || row.startsWith(`${name} `)
          ? wanted.every((l) => row.includes(l))
          : false,
      );
    return line === undefined ? undefined : Number(line.split(' ').pop());
  };

  it('live answers without touching dependencies; ready reports the store and the portal', async () => {
    const live = await h.http.get('/health/live');
    expect(live.status).toBe(200);
    expect(live.body).toEqual({ status: 'ok', info: {}, error: {}, details: {} });
    // Answered without running terminus, but with its headers: a cached probe answer would hide a hang.
    expect(live.headers['cache-control']).toBe('no-cache, no-store, must-revalidate');
    const ready = await h.http.get('/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body.info.store.status).toBe('up');
    expect(ready.body.info.lifecycle.status).toBe('up');
    expect(ready.body.info.portal).toMatchObject({ status: 'up', portalId: 'sandbox', paused: false });
    expect(ready.body.info.portal.queueDepth).toEqual(expect.any(Number));
  });

  it('a portal outage never makes the bridge unready', async () => {
    await fetch(`${h.sandbox.url}/_sandbox/faults`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ kind: 'outage' }),
    });
    try {
      await h.http
        .post('/v1/calls/events')
        .set('Authorization', `Bearer ${PBX_TOKEN}`)
        .send({
          event: 'call.started',
          callId: 'ops-outage',
          direction: 'inbound',
          phoneNumber: '+4930111222',
          at: '2026-11-22T10:00:00Z',
        })
        .expect(202);
      // Readiness reads the store at most once a second: the queue depth may trail the failed request.
      const ready = await eventually(async () => {
        const response = await h.http.get('/health/ready');
        const portal = response.body.info?.portal;
        return portal?.lastRequestOk === false && portal.queueDepth > 0 ? response : undefined;
      });
      expect(ready.status).toBe(200);
      expect(ready.body.info.portal.queueDepth).toBeGreaterThan(0);
    } finally {
      await fetch(`${h.sandbox.url}/_sandbox/faults`, { method: 'DELETE' });
    }
  });

  it('exposes Prometheus metrics for intake, delivery and the queue', async () => {
    await h.http
      .post('/v1/calls/events')
      .set('Authorization', `Bearer ${PBX_TOKEN}`)
      .send([
        {
          event: 'call.started',
          callId: 'ops-metrics',
          direction: 'inbound',
          phoneNumber: '+4930111333',
          at: '2026-11-22T10:00:00Z',
        },
        {
          event: 'call.ended',
          callId: 'ops-metrics',
          at: '2026-11-22T10:01:00Z',
          durationSec: 60,
          status: 'answered',
        },
      ])
      .expect(202);
    await h.http
      .post('/v1/calls/events')
      .set('Authorization', `Bearer ${PBX_TOKEN}`)
      .send({ event: 'nope' })
      .expect(400);
    const text = await eventually(async () => {
      const response = await h.http.get('/metrics');
      return (metric(response.text, 'bridge_commands_total', { step: 'finish', outcome: 'delivered' }) ??
        0) >= 1
        ? response.text
        : undefined;
    });
    expect(metric(text, 'bridge_events_total', { outcome: 'accepted' })).toBeGreaterThanOrEqual(2);
    expect(metric(text, 'bridge_events_total', { outcome: 'rejected' })).toBeGreaterThanOrEqual(1);
    expect(
      metric(text, 'bridge_portal_requests_total', { method: 'batch', outcome: 'ok' }),
    ).toBeGreaterThanOrEqual(2);
    expect(metric(text, 'bridge_batch_commands_count', { portal: 'sandbox' })).toBeGreaterThanOrEqual(2);
    expect(metric(text, 'bridge_queue_depth', { portal: 'sandbox' })).toEqual(expect.any(Number));
    expect(metric(text, 'bridge_queue_oldest_age_seconds', { portal: 'sandbox' })).toEqual(
      expect.any(Number),
    );
    expect(metric(text, 'bridge_portal_paused', { portal: 'sandbox' })).toBe(0);
    expect(metric(text, 'bridge_budget_wait_seconds_total', { portal: 'sandbox' })).toEqual(
      expect.any(Number),
    );
    expect(text).toContain('process_resident_memory_bytes');
  });

  it('gives every request an id, keeping a sane one from the caller', async () => {
    const given = await h.http.get('/health/live').set('X-Request-Id', 'pbx-req-42');
    expect(given.headers['x-request-id']).toBe('pbx-req-42');
    const fresh = await h.http.get('/health/live').set('X-Request-Id', 'bad id with spaces');
    expect(fresh.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('publishes an OpenAPI document generated from the DTOs, with examples, and its UI', async () => {
    const json = await h.http.get('/docs-json');
    expect(json.status).toBe(200);
    const doc = json.body;
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/v1/calls/events', '/v1/calls/{callId}']),
    );
    const post = doc.paths['/v1/calls/events'].post;
    expect(Object.keys(post.responses)).toEqual(
      expect.arrayContaining(['202', '400', '401', '413', '415', '429']),
    );
    expect(post.requestBody.content['application/json'].examples.started.value.event).toBe('call.started');
    const schema = doc.components.schemas.CallEventDto;
    expect(schema.required).toEqual(expect.arrayContaining(['event', 'callId', 'at']));
    expect(schema.properties.status.enum).toContain('cancelled');
    expect(schema.properties.phoneNumber.example).toBe('+49 151 1234-5678');
    const ui = await h.http.get('/docs');
    expect(ui.status).toBe(200);
    expect(ui.text).toContain('swagger-ui');
  });
});
