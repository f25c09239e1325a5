import { sandboxCalls } from '../support/sandbox-inspect';
import { Harness, PBX_TOKEN, startHarness } from '../support/bridge-harness';

/** The PBX-facing contract of POST /v1/calls/events and GET /v1/calls/:callId (docs/API.md). */
describe('PBX intake', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({ PBX_RATE_LIMIT_RPS: '20', PBX_BODY_LIMIT: '65536' });
  });
  afterAll(async () => {
    await h.close();
  });

  const valid = (callId: string) => ({
    event: 'call.started',
    callId,
    direction: 'inbound',
    phoneNumber: '+4915112345678',
    extension: '101',
    at: '2026-11-22T10:00:00+01:00',
  });
  const post = (body: unknown, token = PBX_TOKEN) =>
    h.http
      .post('/v1/calls/events')
      .set('Authorization', `Bearer ${token}`)
      .send(body as object);
  const lookup = (callId: string) =>
    h.http.get(`/v1/calls/${encodeURIComponent(callId)}`).set('Authorization', `Bearer ${PBX_TOKEN}`);

  describe('credentials', () => {
    it('401 without a token, with a wrong one, and with a wrong Basic password', async () => {
      const noToken = await h.http.post('/v1/calls/events').send(valid('auth-1'));
      expect(noToken.status).toBe(401);
      expect((await post(valid('auth-1'), 'wrong')).status).toBe(401);
      const basic = await h.http.post('/v1/calls/events').auth('pbx', 'wrong').send(valid('auth-1'));
      expect(basic.status).toBe(401);
      expect((await lookup('auth-1')).status).toBe(404);
    });

    it('accepts Basic with the token as password and any user name, and every configured token', async () => {
      const basic = await h.http
        .post('/v1/calls/events')
        .auth('asterisk', PBX_TOKEN)
        .send(valid('auth-basic'));
      expect(basic.status).toBe(202);
      expect((await post(valid('auth-second'), 'second-pbx-token')).status).toBe(202);
    });

    it('never echoes the token in an error body', async () => {
      const response = await post(valid('x'), 'secret-looking-token-123');
      expect(JSON.stringify(response.body)).not.toContain('secret-looking-token-123');
    });
  });

  describe('bad input: 400 naming the fields, nothing stored', () => {
    it('names each bad field of a single event', async () => {
      const response = await post({ event: 'call.begun', callId: '', at: 'yesterday' });
      expect(response.status).toBe(400);
      const fields = response.body.errors.map((error: { field: string }) => error.field).sort();
      expect(fields).toEqual(['at', 'callId', 'event']);
      expect(response.body.errors[0].index).toBeUndefined();
    });

    it('names the index of each bad event in an array and stores none of them', async () => {
      const response = await post([
        valid('arr-ok'),
        { ...valid('arr-bad-1'), direction: 'sideways' },
        { ...valid('arr-bad-2'), at: '2026-11-22T10:00:00' },
      ]);
      expect(response.status).toBe(400);
      expect(response.body.errors).toEqual([
        expect.objectContaining({ index: 1, field: 'direction' }),
        expect.objectContaining({ index: 2, field: 'at' }),
      ]);
      expect((await lookup('arr-ok')).status).toBe(404);
    });

    it.each([
      ['call.started without direction', { direction: undefined }, 'direction'],
      ['call.started without phoneNumber', { phoneNumber: undefined }, 'phoneNumber'],
      ['an unparseable phone number', { phoneNumber: 'call me maybe' }, 'phoneNumber'],
      ['a string over 255 characters', { extension: 'x'.repeat(256) }, 'extension'],
      ['a callId over 128 characters', { callId: 'c'.repeat(129) }, 'callId'],
      ['a callId with control characters', { callId: 'abc\u0000def' }, 'callId'],
      ['a date without offset', { at: '2026-11-22 10:00' }, 'at'],
      ['an impossible date', { at: '2026-02-30T10:00:00+01:00' }, 'at'],
      ['a userId that is not a positive integer', { userId: -3 }, 'userId'],
    ])('%s', async (_name, change, field) => {
      const response = await post({ ...valid('bad-one'), ...change });
      expect(response.status).toBe(400);
      expect(response.body.errors.map((error: { field: string }) => error.field)).toContain(field);
    });

    it('call.ended needs durationSec and status, and a valid recordingUrl', async () => {
      const response = await post({
        event: 'call.ended',
        callId: 'end-bad',
        at: '2026-11-22T10:00:00Z',
        recordingUrl: 'ftp://x/y.mp3',
      });
      expect(response.status).toBe(400);
      const fields = response.body.errors.map((error: { field: string }) => error.field).sort();
      expect(fields).toEqual(['durationSec', 'recordingUrl', 'status']);
    });

    it('more than 500 events is a 400, an empty array too', async () => {
      const many = Array.from({ length: 501 }, (_, index) => ({
        event: 'call.answered',
        callId: `many-${index}`,
        at: '2026-11-22T10:00:00Z',
      }));
      const response = await post(many);
      expect(response.status).toBe(400);
      expect(response.body.message).toContain('at most 500');
      expect((await post([])).status).toBe(400);
      expect((await lookup('many-0')).status).toBe(404);
    });

    it('415 for a body that is not JSON, 400 for JSON that does not parse, 413 past the size limit', async () => {
      const form = await h.http
        .post('/v1/calls/events')
        .set('Authorization', `Bearer ${PBX_TOKEN}`)
        .type('form')
        .send('event=call.started');
      expect(form.status).toBe(415);
      const broken = await h.http
        .post('/v1/calls/events')
        .set('Authorization', `Bearer ${PBX_TOKEN}`)
        .set('Content-Type', 'application/json')
        .send('{"event": ');
      expect(broken.status).toBe(400);
      const big = Array.from({ length: 400 }, (_, index) => ({
        ...valid(`big-${index}`),
        extension: 'x'.repeat(200),
      }));
      const tooLarge = await post(big);
      expect(tooLarge.status).toBe(413);
      expect((await lookup('big-0')).status).toBe(404);
    });

    it('the service stays up after bad input', async () => {
      expect((await post(valid('still-up'))).status).toBe(202);
      expect((await h.http.get('/health/live')).status).toBe(200);
    });
  });

  it('stores a call and reports it; 404 for a call never heard of', async () => {
    await post(valid('status-1')).expect(202);
    const response = await lookup('status-1');
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      callId: 'status-1',
      state: expect.stringMatching(/queued|registered/),
      crm: expect.any(Object),
      attempts: expect.any(Number),
    });
    const missing = await lookup('never-heard');
    expect(missing.status).toBe(404);
  });

  it('normalises national numbers with DEFAULT_COUNTRY before they reach the portal', async () => {
    await post({ ...valid('national-1'), phoneNumber: '0151 1234-5679' }).expect(202);
    const calls = await (async () => {
      for (let i = 0; i < 100; i++) {
        const found = (await sandboxCalls(h.sandbox)).filter(
          (call) => call.EXTERNAL_CALL_ID === 'national-1',
        );
        if (found.length) return found;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return [];
    })();
    expect(calls[0]?.PHONE_NUMBER).toBe('+4915112345679');
  });

  it('429 when one PBX token floods, while another token is still served', async () => {
    // Ten times the limit of a second: however slowly a loaded machine takes them in, more than a second's
    // worth arrive within any second (40 did not when the posts took two seconds to go through).
    const responses = await Promise.all(
      Array.from({ length: 200 }, (_, index) => post(valid(`flood-${index}`))),
    );
    const statuses = responses.map((response) => response.status);
    expect(statuses).toContain(429);
    expect(statuses.filter((code) => code === 202).length).toBeGreaterThan(0);
    expect((await post(valid('other-pbx'), 'second-pbx-token')).status).toBe(202);
  });
});
