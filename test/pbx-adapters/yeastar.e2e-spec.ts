import { eventually, Harness, PBX_TOKEN, startHarness } from '../support/bridge-harness';
import { callsByExternalId } from '../support/sandbox-inspect';
import { callStatus, finishedOnPortal, fixtureJson, namedFields } from './adapter-support';

type Webhook = { type: number; sn: string; msg: string };

/** POST /v1/pbx/yeastar: P-Series webhook events, the token in the URL (a webhook sends no headers). */
describe('Yeastar P-Series webhook adapter', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({ PBX_TIME_ZONE: 'Europe/Berlin' });
  });
  afterAll(async () => {
    await h.close();
  });

  const post = (body: unknown, query = `?token=${PBX_TOKEN}`) =>
    h.http.post(`/v1/pbx/yeastar${query}`).send(body as object);

  /** A fixture's event with its `msg` (a JSON string) changed. */
  const withMsg = (path: string, change: (msg: Record<string, unknown>) => void): Webhook => {
    const webhook = fixtureJson<Webhook>(path);
    const msg = JSON.parse(webhook.msg);
    change(msg);
    return { ...webhook, msg: JSON.stringify(msg) };
  };

  it('pops the call card while it rings (30011), records the answer, and finishes it from the CDR (30012)', async () => {
    const callId = '1795338000.612';
    const ringing = await post(fixtureJson('yeastar/call-state-inbound-ringing.json'));
    expect(ringing.status).toBe(202);
    expect(ringing.body).toEqual({ accepted: 1, duplicates: 0, callId });
    await eventually(async () =>
      (await callStatus(h, callId)).body.state === 'registered' ? true : undefined,
    );
    const [registered] = await callsByExternalId(h.sandbox, callId);
    // The inbound trunk member's callee, the number dialled, is the call's line (SPEC §11).
    expect(registered).toMatchObject({
      SHOW: true,
      TYPE: 2,
      USER_ID: 2,
      PHONE_NUMBER: '+4915112345679',
      LINE_NUMBER: '+4930123456',
    });
    expect(registered.finished).toBeNull();

    // The answered state repeats the start (a duplicate) and adds the answer.
    const answered = await post(fixtureJson('yeastar/call-state-inbound-answered.json'));
    expect(answered.body).toEqual({ accepted: 1, duplicates: 1, callId });
    const hangup = await post(fixtureJson('yeastar/call-state-inbound-hangup.json'));
    expect(hangup.status).toBe(202);
    expect(hangup.body).toMatchObject({
      accepted: 0,
      duplicates: 0,
      ignored: expect.stringContaining('hung up'),
    });

    const cdr = await post(fixtureJson('yeastar/cdr-inbound-answered.json'));
    expect(cdr.body).toEqual({ accepted: 1, duplicates: 0, callId });
    const call = await finishedOnPortal(h, callId);
    expect(call.finished).toMatchObject({ DURATION: 121, STATUS_CODE: '200' });
    expect(call.registerRequests).toBe(1);
    // The recording is a file name on the PBX, not a URL the portal could fetch: nothing attached.
    expect(call.records).toEqual([]);
  });

  it('registers and finishes a call known only from its CDR, the local start in PBX_TIME_ZONE', async () => {
    expect((await post(fixtureJson('yeastar/cdr-outbound-no-answer.json'))).status).toBe(202);
    const call = await finishedOnPortal(h, '1795341600.640');
    expect(call).toMatchObject({
      SHOW: false,
      TYPE: 1,
      USER_ID: 3,
      PHONE_NUMBER: '+4940555111111',
      CALL_START_DATE: '2026-11-22T11:00:00+01:00',
    });
    expect(call.finished).toMatchObject({ DURATION: 0, STATUS_CODE: '304' });
  });

  it("an inbound CDR's did_number is the call's line; an outbound CDR names none (the default line)", async () => {
    const inbound = withMsg('yeastar/cdr-inbound-answered.json', (msg) =>
      Object.assign(msg, { call_id: '1795342000.650', did_number: '030 7654321' }),
    );
    expect((await post(inbound)).status).toBe(202);
    expect(await finishedOnPortal(h, '1795342000.650')).toMatchObject({ LINE_NUMBER: '+49307654321' });
    const outboundCdr = withMsg('yeastar/cdr-outbound-no-answer.json', (msg) =>
      Object.assign(msg, { call_id: '1795342000.651' }),
    );
    expect((await post(outboundCdr)).status).toBe(202);
    const outbound = await finishedOnPortal(h, '1795342000.651');
    expect(outbound.LINE_NUMBER).toBe(h.config.B24_LINE_NUMBER ?? '');
  });

  it.each([
    ['BUSY', '486', undefined],
    ['FAILED', 'OTHER', 'FAILED'],
    ['VOICEMAIL', '304', undefined],
    ['ANSWERD', '200', undefined],
  ])('maps CDR status %s to STATUS_CODE %s', async (status, code, reason) => {
    const callId = `1795345200.${status.toLowerCase()}`;
    const webhook = withMsg('yeastar/cdr-outbound-no-answer.json', (msg) =>
      Object.assign(msg, { call_id: callId, status, talk_duration: status === 'ANSWERD' ? 12 : 0 }),
    );
    expect((await post(webhook)).status).toBe(202);
    const call = await finishedOnPortal(h, callId);
    expect(call.finished?.STATUS_CODE).toBe(code);
    if (reason) expect(call.finished?.FAILED_REASON).toBe(reason);
  });

  it('a CDR posted again (Yeastar retries) is a duplicate: one call on the portal', async () => {
    const webhook = withMsg('yeastar/cdr-outbound-no-answer.json', (msg) => (msg.call_id = '1795345200.dup'));
    expect((await post(webhook)).body).toEqual({ accepted: 1, duplicates: 0, callId: '1795345200.dup' });
    expect((await post(webhook)).body).toEqual({ accepted: 0, duplicates: 1, callId: '1795345200.dup' });
    expect((await finishedOnPortal(h, '1795345200.dup')).registerRequests).toBe(1);
  });

  it('acknowledges internal calls and other event types and stores nothing', async () => {
    const internal = await post(fixtureJson('yeastar/cdr-internal.json'));
    expect(internal.status).toBe(202);
    expect(internal.body).toMatchObject({
      accepted: 0,
      duplicates: 0,
      ignored: expect.stringContaining('internal'),
    });
    expect((await callStatus(h, '1651057476.362')).status).toBe(404);
    const other = await post(fixtureJson('yeastar/extension-call-status.json'));
    expect(other.status).toBe(202);
    expect(other.body).toMatchObject({
      accepted: 0,
      duplicates: 0,
      ignored: expect.stringContaining('30008'),
    });
  });

  describe('the token in the query string', () => {
    it('401 without it or with a wrong one, never echoing it', async () => {
      const body = fixtureJson('yeastar/extension-call-status.json');
      expect((await post(body, '')).status).toBe(401);
      const wrong = await post(body, '?token=not-the-token-5c1e');
      expect(wrong.status).toBe(401);
      expect(JSON.stringify(wrong.body)).not.toContain('not-the-token-5c1e');
    });

    it('is not accepted by the JSON API, which keeps to Authorization headers', async () => {
      const response = await h.http
        .post(`/v1/calls/events?token=${PBX_TOKEN}`)
        .send({ event: 'call.answered', callId: 'q-1', at: '2026-11-22T10:00:00Z' });
      expect(response.status).toBe(401);
    });
  });

  describe('malformed events: 400 naming the field, nothing stored', () => {
    it('msg that is not JSON', async () => {
      const response = await post({ type: 30012, sn: '3631A2124XXX', msg: '{"call_id": ' });
      expect(response.status).toBe(400);
      expect(namedFields(response.body)).toEqual(['msg']);
    });

    it('names bad fields inside msg by their path', async () => {
      const webhook = withMsg('yeastar/cdr-outbound-no-answer.json', (msg) => {
        msg.call_id = '1795345200.bad';
        msg.status = 'HUNG UP';
        msg.time_start = '27/04/2022 19:04';
        delete msg.talk_duration;
      });
      const response = await post(webhook);
      expect(response.status).toBe(400);
      expect(namedFields(response.body).sort()).toEqual([
        'msg.status',
        'msg.talk_duration',
        'msg.time_start',
      ]);
      expect((await callStatus(h, '1795345200.bad')).status).toBe(404);
    });

    it('a state event without members, an envelope without type, an unknown tz, a form body', async () => {
      const noMembers = await post({
        type: 30011,
        sn: 'x',
        msg: JSON.stringify({ call_id: '1795345200.nm', members: [] }),
      });
      expect(noMembers.status).toBe(400);
      expect(namedFields(noMembers.body)).toEqual(['msg.members']);
      const noType = await post({ sn: 'x', msg: '{}' });
      expect(namedFields(noType.body)).toEqual(['type']);
      const zone = await post(
        fixtureJson('yeastar/cdr-outbound-no-answer.json'),
        `?token=${PBX_TOKEN}&tz=Berlin`,
      );
      expect(zone.status).toBe(400);
      expect(namedFields(zone.body)).toEqual(['tz']);
      const form = await h.http.post(`/v1/pbx/yeastar?token=${PBX_TOKEN}`).type('form').send('type=30012');
      expect(form.status).toBe(415);
    });
  });
});
