import { rmSync } from 'node:fs';
import { Lifecycle } from '../../src/health/lifecycle';
import { CallStore } from '../../src/store/call-store';
import { fixtureForm, fixtureJson } from '../pbx-adapters/adapter-support';
import { eventually, Harness, PBX_TOKEN, startHarness } from '../support/bridge-harness';

const METRICS_TOKEN = 'metrics-test-token-4e1d';
const bearer = (token: string) => `Bearer ${token}`;

/** `{"a":{"a":…}}` nested `depth` deep around `inner`, built without recursion. */
function nested(depth: number, inner = '1'): string {
  return '{"a":'.repeat(depth) + inner + '}'.repeat(depth);
}

const started = (callId: string) => ({
  event: 'call.started',
  callId,
  direction: 'inbound',
  phoneNumber: '+4930555000111',
  extension: '101',
  at: '2026-11-22T10:00:00+01:00',
});

/** The bridge's HTTP surface (issue 13): headers, unauthenticated routes, readiness, credentials and bodies. */
describe('the HTTP surface', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({ METRICS_TOKEN, PBX_RATE_LIMIT_RPS: '10000' });
  });
  afterAll(async () => {
    await h.close();
  });

  const callKnown = async (callId: string) =>
    (await h.http.get(`/v1/calls/${encodeURIComponent(callId)}`).set('Authorization', bearer(PBX_TOKEN)))
      .status;

  it('names no framework on any answer: success, 401, 400, 404, docs and metrics', async () => {
    const answers = [
      await h.http.get('/health/live'),
      await h.http.get('/no/such/route'),
      await h.http.post('/v1/calls/events').set('Content-Type', 'application/json').send('{}'),
      await h.http
        .post('/v1/calls/events')
        .set('Authorization', bearer(PBX_TOKEN))
        .set('Content-Type', 'application/json')
        .send('{"broken'),
      await h.http.get('/docs-json'),
      await h.http.get('/metrics').set('Authorization', bearer(METRICS_TOKEN)),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([200, 404, 401, 400, 200, 200]);
    for (const answer of answers) expect(answer.headers['x-powered-by']).toBeUndefined();
  });

  describe('GET /metrics with METRICS_TOKEN set', () => {
    it('answers only the Bearer token, and never shows it', async () => {
      const missing = await h.http.get('/metrics');
      const wrong = await h.http.get('/metrics').set('Authorization', bearer(`${METRICS_TOKEN}x`));
      const pbxToken = await h.http.get('/metrics').set('Authorization', bearer(PBX_TOKEN));
      for (const refused of [missing, wrong, pbxToken]) {
        expect(refused.status).toBe(401);
        expect(refused.text).toContain('METRICS_TOKEN');
        expect(refused.text).not.toContain(METRICS_TOKEN);
      }
      const scraped = await h.http.get('/metrics').set('Authorization', bearer(METRICS_TOKEN));
      expect(scraped.status).toBe(200);
      expect(scraped.text).toContain('bridge_');
    });

    it('stays open without METRICS_TOKEN (scraped inside the cluster)', async () => {
      const open = await startHarness();
      try {
        expect((await open.http.get('/metrics')).status).toBe(200);
      } finally {
        await open.close();
      }
    });
  });

  describe('credentials before the body', () => {
    const fiveMegabytes = JSON.stringify({ pad: 'x'.repeat(5 * 1024 * 1024) });
    const routes = ['/v1/calls/events', '/v1/pbx/freeswitch', '/v1/pbx/yeastar', '/v1/pbx/3cx/calls'];

    it.each(routes)(
      '%s: 401 for a 5 MB body without a token, not 413: the body is never read',
      async (route) => {
        const response = await h.http.post(route).set('Content-Type', 'application/json').send(fiveMegabytes);
        expect(response.status).toBe(401);
        expect(response.body.message).toMatch(/PBX token/);
        const withToken = await h.http
          .post(route)
          .set('Authorization', bearer(PBX_TOKEN))
          .set('Content-Type', 'application/json')
          .send(fiveMegabytes);
        expect(withToken.status).toBe(413);
      },
    );

    it('401 for a wrong token whatever the body: neither parsed (400) nor its type checked (415)', async () => {
      const broken = await h.http
        .post('/v1/calls/events')
        .set('Authorization', bearer('wrong-token'))
        .set('Content-Type', 'application/json')
        .send('{"broken');
      expect(broken.status).toBe(401);
      const xml = await h.http
        .post('/v1/pbx/asterisk')
        .set('Authorization', bearer('wrong-token'))
        .set('Content-Type', 'application/xml')
        .send('<cdr/>');
      expect(xml.status).toBe(401);
      const deep = await h.http
        .post('/v1/pbx/yeastar?token=wrong-token')
        .set('Content-Type', 'application/json')
        .send(nested(5000));
      expect(deep.status).toBe(401);
    });
  });

  describe('bodies nested deeper than any event or PBX record', () => {
    const post = (route: string, type: string, body: string) =>
      h.http.post(route).set('Authorization', bearer(PBX_TOKEN)).set('Content-Type', type).send(body);
    const json = 'application/json';
    const form = 'application/x-www-form-urlencoded';

    it('POST /v1/calls/events: 400 naming the body, nothing stored, for 5 000 deep inside an event', async () => {
      const single = JSON.stringify(started('deep-single')).replace('}', `,"extra":${nested(5000)}}`);
      const list = `[${JSON.stringify(started('deep-list-0'))},${single.replace('deep-single', 'deep-list-1')}]`;
      for (const body of [single, list, '['.repeat(5000) + ']'.repeat(5000)]) {
        const response = await post('/v1/calls/events', json, body);
        expect(response.status).toBe(400);
        expect(response.body.message).toMatch(/^the body nests arrays and objects more than 3 deep/);
      }
      for (const callId of ['deep-single', 'deep-list-0', 'deep-list-1']) {
        expect(await callKnown(callId)).toBe(404);
      }
      // One level of a wrong type inside an event is still answered field by field.
      const wrongType = await post(
        '/v1/calls/events',
        json,
        JSON.stringify({ ...started('x'), callId: ['x'] }),
      );
      expect(wrongType.status).toBe(400);
      expect(wrongType.body.errors.map((error: { field: string }) => error.field)).toContain('callId');
    });

    it('the PBX routes: 400 naming the body in every encoding, also for JSON inside cdr and msg', async () => {
      const cases: [string, string, string][] = [
        ['/v1/pbx/freeswitch', json, nested(5000)],
        ['/v1/pbx/freeswitch', form, `cdr=${encodeURIComponent(nested(5000))}`],
        [
          '/v1/pbx/freeswitch',
          'application/x-www-form-base64-encoded',
          `cdr=${Buffer.from(nested(5000)).toString('base64')}`,
        ],
        ['/v1/pbx/freeswitch', json, JSON.stringify({ cdr: nested(5000) })],
        ['/v1/pbx/yeastar', json, nested(5000)],
        ['/v1/pbx/yeastar', json, JSON.stringify({ type: 30012, sn: 'x', msg: nested(5000) })],
        ['/v1/pbx/3cx/calls', json, nested(5000)],
      ];
      for (const [route, type, body] of cases) {
        const response = await post(route, type, body);
        expect({ route, type, status: response.status }).toEqual({ route, type, status: 400 });
        expect(response.body.message).toMatch(
          /^the body nests arrays and objects more than \d+ deep, deeper than/,
        );
      }
    });

    it('what the fuzz test found: no 500 for a field named constructor, a nested callflow, an endless duration', async () => {
      const event = { ...started('ctor-event'), callId: JSON.parse('{"constructor":1}') };
      const ctorEvent = await post('/v1/calls/events', json, JSON.stringify(event));
      expect(ctorEvent.status).toBe(400);
      expect(ctorEvent.body.errors.map((error: { field: string }) => error.field)).toEqual(['callId']);

      const cdr = fixtureJson<{ variables: Record<string, unknown>; callflow: Record<string, unknown>[] }>(
        'freeswitch/inbound-answered.a-leg.json',
      );
      cdr.variables.uuid = 'ctor-cdr';
      const withConstructor = JSON.stringify(cdr).replace('"times":{', '"times":{"constructor":["1"],');
      expect((await post('/v1/pbx/freeswitch', json, withConstructor)).status).toBe(202);
      cdr.variables.uuid = 'nested-callflow';
      const nestedFlow = await post(
        '/v1/pbx/freeswitch',
        json,
        JSON.stringify({ ...cdr, callflow: [cdr.callflow] }),
      );
      expect(nestedFlow.status).toBe(400);
      expect(nestedFlow.body.errors.map((error: { field: string }) => error.field)).toContain('callflow');
      expect(await callKnown('nested-callflow')).toBe(404);

      const endless = fixtureForm('asterisk/inbound-answered.txt');
      endless.set('linkedid', 'endless-duration');
      endless.set('duration', '9'.repeat(400));
      const endlessAnswer = await post('/v1/pbx/asterisk', form, endless.toString());
      expect(endlessAnswer.status).toBe(400);
      expect(endlessAnswer.body.errors.map((error: { field: string }) => error.field)).toContain('duration');
      expect(await callKnown('endless-duration')).toBe(404);
    });

    it('the portal posts (/oauth/*): 400 naming the nesting of form fields', async () => {
      const response = await h.http
        .post('/oauth/events')
        .set('Content-Type', form)
        .send('event=ONAPPUNINSTALL&data[a][b][c][d][e]=1');
      expect(response.status).toBe(400);
      expect(response.body.message).toMatch(/nests fields more than 3 deep/);
    });
  });

  describe('GET /health/ready', () => {
    it('answers a burst of probes from one look at the store per second', async () => {
      const store = h.app.get(CallStore);
      const writes = jest.spyOn(store, 'checkWritable');
      try {
        const began = Date.now();
        const answers = await Promise.all(Array.from({ length: 40 }, () => h.http.get('/health/ready')));
        const elapsedSec = (Date.now() - began) / 1000;
        expect(answers.every((answer) => answer.status === 200)).toBe(true);
        // A store check at most every second, however slow the machine made the burst (the allowance
        // grows with the time the burst took, so a loaded machine cannot fail it).
        expect(writes.mock.calls.length).toBeLessThanOrEqual(Math.floor(elapsedSec) + 1);
        expect(answers[0].body.details.store.status).toBe('up');
        expect(answers[0].body.details.portal.queueDepth).toEqual(expect.any(Number));
      } finally {
        writes.mockRestore();
      }
    });

    it('turns false at once when the shutdown begins, whatever the store said a moment ago', async () => {
      const closing = await startHarness({ SHUTDOWN_DELAY_MS: '4000' });
      let shutdown: Promise<void> | undefined;
      try {
        expect((await closing.http.get('/health/ready')).status).toBe(200);
        shutdown = closing.app.close();
        await eventually(async () => closing.app.get(Lifecycle).shuttingDown || undefined);
        const ready = await closing.http.get('/health/ready');
        expect(ready.status).toBe(503);
        expect(ready.body.error.lifecycle.status).toBe('down');
      } finally {
        await (shutdown ?? closing.app.close());
        await closing.sandbox.close();
        rmSync(closing.dir, { recursive: true, force: true });
      }
    });
  });
});
