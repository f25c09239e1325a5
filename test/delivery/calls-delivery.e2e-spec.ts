import { callsByExternalId, clearFaults, injectFault, sandboxLeads } from '../support/sandbox-inspect';
import {
  ADMIN_TOKEN,
  ended,
  eventually,
  Harness,
  PBX_TOKEN,
  started,
  startHarness,
} from '../support/bridge-harness';

/** Calls go in over HTTP, land in the real SQLite file, and reach the sandbox portal over real HTTP. */
describe('call delivery to the portal', () => {
  let h: Harness;
  let seq = 0;
  const newId = (prefix: string) => `${prefix}-${Date.now()}-${++seq}`;

  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.close();
  });
  afterEach(async () => {
    await clearFaults(h.sandbox);
  });

  const post = (body: unknown) =>
    h.http
      .post('/v1/calls/events')
      .set('Authorization', `Bearer ${PBX_TOKEN}`)
      .send(body as object);

  const status = async (callId: string) =>
    (await h.http.get(`/v1/calls/${encodeURIComponent(callId)}`).set('Authorization', `Bearer ${PBX_TOKEN}`))
      .body;

  const untilState = (callId: string, state: string, timeoutMs?: number) =>
    eventually(async () => {
      const body = await status(callId);
      return body.state === state ? body : undefined;
    }, timeoutMs);

  it('delivers an inbound answered call with its recording: register, finish, attachRecord', async () => {
    const callId = newId('in');
    const recordingUrl = `https://pbx.example.com/rec/${callId}.mp3`;
    const first = await post(started(callId));
    expect(first.status).toBe(202);
    expect(first.body).toEqual({ accepted: 1, duplicates: 0 });
    // Registered while it rings (SHOW=1); a call that ends before its register goes out is registered with SHOW=0.
    await untilState(callId, 'registered');
    const second = await post(ended(callId, { recordingUrl }));
    expect(second.body).toEqual({ accepted: 1, duplicates: 0 });

    const view = await untilState(callId, 'finished');
    await eventually(async () => ((await status(callId)).recording === 'attached' ? true : undefined));
    const [call] = await callsByExternalId(h.sandbox, callId);
    expect(call).toMatchObject({
      PHONE_NUMBER: '+4915112345678',
      TYPE: 2,
      CRM_CREATE: true,
      SHOW: true,
      CALL_START_DATE: '2026-11-22T10:00:00+01:00',
      USER_ID: 2,
    });
    expect(call.finished).toMatchObject({ DURATION: 121, STATUS_CODE: '200' });
    expect(call.records.map((record) => record.RECORD_URL)).toEqual([recordingUrl]);
    expect(view.crm.callId).toBe(call.CALL_ID);
    expect(view.lastError).toBeNull();
  });

  it('delivers an outbound missed call with TYPE 1 and STATUS_CODE 304', async () => {
    const callId = newId('out');
    await post([
      started(callId, { direction: 'outbound', phoneNumber: '0151 99887766' }),
      ended(callId, { durationSec: 0, status: 'missed' }),
    ]).expect(202);
    await untilState(callId, 'finished');
    const [call] = await callsByExternalId(h.sandbox, callId);
    expect(call).toMatchObject({ TYPE: 1, PHONE_NUMBER: '+4915199887766' });
    expect(call.finished).toMatchObject({ DURATION: 0, STATUS_CODE: '304' });
  });

  it.each([
    ['busy', '486'],
    ['declined', '603'],
    ['cancelled', '603-S'],
    ['failed', 'OTHER'],
  ])('maps status %s to STATUS_CODE %s', async (endStatus, code) => {
    const callId = newId(`st-${endStatus}`);
    await post([started(callId), ended(callId, { durationSec: 0, status: endStatus })]).expect(202);
    await untilState(callId, 'finished');
    const [call] = await callsByExternalId(h.sandbox, callId);
    expect(call.finished?.STATUS_CODE).toBe(code);
    if (endStatus === 'failed') expect(call.finished?.FAILED_REASON).toBeTruthy();
  });

  it('registers and finishes a CDR-only call without popping the card, start = at - duration with the offset kept', async () => {
    const callId = newId('cdr');
    await post(ended(callId, { direction: 'inbound', phoneNumber: '+4930123456', extension: '102' })).expect(
      202,
    );
    await untilState(callId, 'finished');
    const [call] = await callsByExternalId(h.sandbox, callId);
    expect(call).toMatchObject({ SHOW: false, CALL_START_DATE: '2026-11-22T10:00:06+01:00', USER_ID: 3 });
    expect(call.finished?.DURATION).toBe(121);
  });

  it('uses startedAt of a CDR when given, and a later call.started changes nothing on the portal', async () => {
    const callId = newId('cdr2');
    await post(
      ended(callId, {
        direction: 'outbound',
        phoneNumber: '+4930123457',
        startedAt: '2026-11-22T09:59:00-05:00',
      }),
    ).expect(202);
    await untilState(callId, 'finished');
    await post(started(callId)).expect(202);
    const view = await status(callId);
    expect(view.state).toBe('finished');
    const calls = await callsByExternalId(h.sandbox, callId);
    expect(calls).toHaveLength(1);
    expect(calls[0].CALL_START_DATE).toBe('2026-11-22T09:59:00-05:00');
    expect(calls[0].registerRequests).toBe(1);
  });

  it('counts a repeated (callId, event) as a duplicate and calls the portal once', async () => {
    const callId = newId('dup');
    expect((await post(started(callId))).body).toEqual({ accepted: 1, duplicates: 0 });
    expect((await post(started(callId))).body).toEqual({ accepted: 0, duplicates: 1 });
    expect((await post([ended(callId), ended(callId)])).body).toEqual({ accepted: 1, duplicates: 1 });
    await untilState(callId, 'finished');
    const calls = await callsByExternalId(h.sandbox, callId);
    expect(calls).toHaveLength(1);
    expect(calls[0].registerRequests).toBe(1);
  });

  it('holds a call.ended without party details until its call.started arrives', async () => {
    const callId = newId('late-start');
    await post(ended(callId, { extension: '101' })).expect(202);
    const held = await status(callId);
    expect(held).toMatchObject({ state: 'queued', waitingForStart: true });
    expect(await callsByExternalId(h.sandbox, callId)).toHaveLength(0);

    await post(started(callId)).expect(202);
    await untilState(callId, 'finished');
    const [call] = await callsByExternalId(h.sandbox, callId);
    expect(call).toMatchObject({ SHOW: false, CALL_START_DATE: '2026-11-22T10:00:00+01:00' });
  });

  it('routes a call with an unknown internal number to B24_DEFAULT_USER_ID and says so', async () => {
    const callId = newId('unknown-ext');
    await post([started(callId, { extension: '999' }), ended(callId)]).expect(202);
    const view = await untilState(callId, 'finished');
    expect(view.routedToDefaultUser).toBe(true);
    const [call] = await callsByExternalId(h.sandbox, callId);
    expect(call.USER_ID).toBe(1);
  });

  it('routes a call naming no employee to B24_DEFAULT_USER_ID', async () => {
    const callId = newId('no-ext');
    await post([started(callId, { extension: undefined }), ended(callId)]).expect(202);
    const view = await untilState(callId, 'finished');
    expect(view.routedToDefaultUser).toBe(true);
    expect((await callsByExternalId(h.sandbox, callId))[0].USER_ID).toBe(1);
  });

  it('creates a lead for an unknown number and reports it in the call status', async () => {
    const callId = newId('lead');
    const leadsBefore = (await sandboxLeads(h.sandbox)).length;
    await post([started(callId, { phoneNumber: '+4940555000111' }), ended(callId)]).expect(202);
    const view = await untilState(callId, 'finished');
    expect(view.crm.createdLead).toEqual(expect.any(Number));
    expect(view.crm.entityType).toBe('LEAD');
    expect((await sandboxLeads(h.sandbox)).length).toBe(leadsBefore + 1);
  });

  describe('retryable portal answers are retried until the call is delivered once', () => {
    it.each([
      ['HTTP 500', { kind: 'http', status: 500, error: 'INTERNAL_SERVER_ERROR', times: 2 }],
      ['503 QUERY_LIMIT_EXCEEDED', { kind: 'http', status: 503, error: 'QUERY_LIMIT_EXCEEDED', times: 2 }],
      [
        '429 OPERATION_TIME_LIMIT',
        {
          kind: 'http',
          status: 429,
          error: 'OPERATION_TIME_LIMIT',
          method: 'telephony.externalcall.register',
          times: 1,
        },
      ],
      [
        'a register command failing inside the batch',
        {
          kind: 'http',
          status: 500,
          error: 'INTERNAL_SERVER_ERROR',
          method: 'telephony.externalcall.register',
          times: 1,
        },
      ],
    ])('%s', async (_name, fault) => {
      await injectFault(h.sandbox, fault);
      const callId = newId('retry');
      await post([started(callId), ended(callId)]).expect(202);
      const view = await untilState(callId, 'finished');
      expect(view.attempts).toBeGreaterThan(2);
      const calls = await callsByExternalId(h.sandbox, callId);
      expect(calls).toHaveLength(1);
      expect(calls[0].finished).not.toBeNull();
    });

    it('an outage: the PBX still gets 202 and the call is delivered once the portal is back', async () => {
      await injectFault(h.sandbox, { kind: 'outage' });
      const callId = newId('outage');
      await post([started(callId), ended(callId)]).expect(202);
      const waiting = await eventually(async () => {
        const body = await status(callId);
        return body.attempts > 0 && body.lastError ? body : undefined;
      });
      expect(waiting.state).toBe('queued');
      await clearFaults(h.sandbox);
      await untilState(callId, 'finished');
      expect(await callsByExternalId(h.sandbox, callId)).toHaveLength(1);
    });

    it('a portal slower than the timeout: the register is repeated safely and makes one call', async () => {
      await injectFault(h.sandbox, { kind: 'latency', ms: 2500 });
      const callId = newId('slow');
      await post(started(callId)).expect(202);
      await eventually(async () =>
        (await status(callId)).lastError?.includes('did not answer') ? true : undefined,
      );
      await clearFaults(h.sandbox);
      await post(ended(callId)).expect(202);
      await untilState(callId, 'finished');
      const calls = await callsByExternalId(h.sandbox, callId);
      expect(calls).toHaveLength(1);
      expect(calls[0].registerRequests).toBeGreaterThanOrEqual(2);
    });
  });

  describe('non-retryable answers park the call as failed with the portal words', () => {
    it('missing rights on register: failed, listed for the operator, re-queued and delivered', async () => {
      await injectFault(h.sandbox, {
        kind: 'http',
        status: 403,
        error: 'ACCESS_DENIED',
        description: 'Access denied for this method',
        method: 'telephony.externalcall.register',
      });
      const callId = newId('denied');
      await post([started(callId), ended(callId)]).expect(202);
      const failed = await untilState(callId, 'failed');
      expect(failed.lastError).toContain('ACCESS_DENIED');
      expect(failed.lastError).toContain('Access denied for this method');

      const list = await h.http
        .get('/v1/admin/calls?state=failed')
        .set('Authorization', `Bearer ${ADMIN_TOKEN}`);
      expect(list.status).toBe(200);
      expect(list.body.calls.map((call: { callId: string }) => call.callId)).toContain(callId);

      await clearFaults(h.sandbox);
      const requeued = await h.http
        .post(`/v1/admin/calls/${callId}/requeue`)
        .set('Authorization', `Bearer ${ADMIN_TOKEN}`);
      expect(requeued.status).toBe(200);
      expect(requeued.body.state).toBe('queued');
      await untilState(callId, 'finished');
      expect(await callsByExternalId(h.sandbox, callId)).toHaveLength(1);
    });

    it('bad parameters on finish: failed with the portal words', async () => {
      await injectFault(h.sandbox, {
        kind: 'http',
        status: 400,
        error: 'INVALID_ARGUMENT',
        description: 'DURATION is wrong',
        method: 'telephony.externalcall.finish',
      });
      const callId = newId('badfinish');
      await post([started(callId), ended(callId)]).expect(202);
      const failed = await untilState(callId, 'failed');
      expect(failed.lastError).toContain('DURATION is wrong');
      expect(failed.crm.callId).toEqual(expect.any(String));
    });

    it('a recording the portal refuses leaves the call finished with the reason', async () => {
      await injectFault(h.sandbox, {
        kind: 'http',
        status: 400,
        error: 'ERROR_CORE',
        description: 'Unsupported file format',
        method: 'telephony.externalcall.attachRecord',
      });
      const callId = newId('badrec');
      await post([
        started(callId),
        ended(callId, { recordingUrl: 'https://pbx.example.com/rec/x.gsm' }),
      ]).expect(202);
      const view = await eventually(async () => {
        const body = await status(callId);
        return body.recording === 'failed' ? body : undefined;
      });
      expect(view.state).toBe('finished');
      expect(view.lastError).toContain('Unsupported file format');
    });

    it('admin endpoints need the admin token', async () => {
      await h.http.get('/v1/admin/calls').expect(401);
      await h.http.get('/v1/admin/calls').set('Authorization', `Bearer ${PBX_TOKEN}`).expect(401);
      await h.http
        .get('/v1/admin/calls?state=nope')
        .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
        .expect(400);
      await h.http
        .post('/v1/admin/calls/never-heard/requeue')
        .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
        .expect(404);
    });
  });
});
