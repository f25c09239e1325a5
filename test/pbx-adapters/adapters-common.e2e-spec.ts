import { Harness, PBX_TOKEN, startHarness } from '../support/bridge-harness';
import { callStatus, fixtureForm, fixtureJson, fixtureText } from './adapter-support';

const ROUTES = ['/v1/pbx/freeswitch', '/v1/pbx/asterisk', '/v1/pbx/yeastar', '/v1/pbx/3cx/calls'];

/** What every adapter route shares with POST /v1/calls/events: credentials, body limits, rate limits. */
describe('PBX adapter routes', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({ PBX_BODY_LIMIT: '4096', PBX_RATE_LIMIT_RPS: '5' });
  });
  afterAll(async () => {
    await h.close();
  });

  it.each(ROUTES)('%s: 401 without a token, 413 past PBX_BODY_LIMIT, 415 for XML', async (route) => {
    const form = route.endsWith('asterisk');
    const type = form ? 'application/x-www-form-urlencoded' : 'application/json';
    const body = (pad: number) =>
      form ? `src=${'1'.repeat(pad)}` : JSON.stringify({ pad: 'x'.repeat(pad) });
    expect((await h.http.post(route).set('Content-Type', type).send(body(10))).status).toBe(401);
    const big = await h.http
      .post(route)
      .set('Authorization', `Bearer ${PBX_TOKEN}`)
      .set('Content-Type', type)
      .send(body(5000));
    expect(big.status).toBe(413);
    expect(big.body.message).toContain('4096');
    const xml = await h.http
      .post(route)
      .set('Authorization', `Bearer ${PBX_TOKEN}`)
      .set('Content-Type', 'application/xml')
      .send('<cdr/>');
    expect(xml.status).toBe(415);
  });

  it('counts the query token per token: one flooding webhook gets 429, another PBX is still served', async () => {
    const event = fixtureJson('yeastar/extension-call-status.json');
    const flood = await Promise.all(
      Array.from({ length: 20 }, () => h.http.post(`/v1/pbx/yeastar?token=${PBX_TOKEN}`).send(event)),
    );
    const statuses = flood.map((response) => response.status);
    expect(statuses).toContain(429);
    expect(statuses).toContain(202);
    const other = await h.http
      .post('/v1/pbx/asterisk')
      .auth('asterisk', 'second-pbx-token')
      .type('form')
      .send(fixtureText('asterisk/inbound-busy.txt'));
    expect(other.status).toBe(202);
  });

  it('publishes the adapter routes in the OpenAPI document', async () => {
    const { body } = await h.http.get('/docs-json').expect(200);
    for (const route of [...ROUTES, '/v1/pbx/3cx/lookup']) expect(Object.keys(body.paths)).toContain(route);
  });
});

/** Calls whose caller withheld the number: stored as `anonymous` (SPEC §9), never dropped. */
describe('PBX adapter routes: calls without an outside number', () => {
  let quiet: Harness;

  beforeAll(async () => {
    quiet = await startHarness();
  });
  afterAll(async () => {
    await quiet.close();
  });

  it('stores an inbound call whose caller withheld the number as anonymous, on every PBX', async () => {
    const freeSwitch = fixtureText('freeswitch/inbound-answered.a-leg.json')
      .replaceAll('+4930555010101', 'anonymous')
      .replaceAll('0f7c4b9e-2d6a-4c1b-9a53-6f1e8d2c4a10', 'withheld-fs');
    const asterisk = fixtureForm('asterisk/inbound-answered.txt');
    asterisk.set('linkedid', 'withheld-ast');
    asterisk.set('src', '');
    const yeastar = fixtureJson<{ msg: string }>('yeastar/cdr-inbound-answered.json');
    yeastar.msg = yeastar.msg.replace('1795338000.612', 'withheld-ys').replace('015112345679', 'Anonymous');
    const threeCx = { ...fixtureJson('3cx/report-call-missed.json'), Number: 'unknown' };
    const posts: [string, string, string | object, string][] = [
      ['/v1/pbx/freeswitch', 'application/json', freeSwitch, 'withheld-fs'],
      ['/v1/pbx/asterisk', 'application/x-www-form-urlencoded', asterisk.toString(), 'withheld-ast'],
      ['/v1/pbx/yeastar', 'application/json', yeastar, 'withheld-ys'],
      ['/v1/pbx/3cx/calls', 'application/json', threeCx, ''],
    ];
    for (const [route, type, body, callId] of posts) {
      const response = await quiet.http
        .post(route)
        .set('Authorization', `Bearer ${PBX_TOKEN}`)
        .set('Content-Type', type)
        .send(body);
      expect(response.status).toBe(202);
      expect(response.body.accepted).toBeGreaterThan(0);
      if (callId) expect((await callStatus(quiet, callId)).status).toBe(200);
    }
  });
});
