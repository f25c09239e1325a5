import { SandboxPortal } from '../../sandbox';
import { sandboxTranscripts } from '../support/sandbox-inspect';
import { Json, query, request } from './http';

describe('sandbox portal: telephony.call.attachTranscription and voximplant.statistic.get', () => {
  let portal: SandboxPortal;
  const call = (method: string, params: Record<string, unknown>) =>
    request(`${portal.webhookUrl}${method}`, { json: params });
  const register = async (externalId: string, params: Record<string, unknown> = {}): Promise<string> => {
    const answer = await call('telephony.externalcall.register', {
      USER_PHONE_INNER: '101',
      PHONE_NUMBER: '+49 221 5550123',
      CALL_START_DATE: '2026-11-22T10:00:00+01:00',
      TYPE: 2,
      EXTERNAL_CALL_ID: externalId,
      ...params,
    });
    expect(answer.status).toBe(200);
    return answer.body.result.CALL_ID;
  };
  const finish = async (callId: string, duration = 42) =>
    expect(
      (await call('telephony.externalcall.finish', { CALL_ID: callId, USER_ID: 2, DURATION: duration }))
        .status,
    ).toBe(200);
  const finishedCall = async (externalId: string): Promise<string> => {
    const callId = await register(externalId);
    await finish(callId);
    return callId;
  };
  const messages = [
    { SIDE: 'User', START_TIME: 1, STOP_TIME: 3, MESSAGE: 'Good afternoon, how can I help?' },
    { SIDE: 'Client', START_TIME: 4, STOP_TIME: 7, MESSAGE: 'Do you sell vacuum cleaners?' },
  ];
  const attach = (params: Record<string, unknown>) => call('telephony.call.attachTranscription', params);
  const coreError = (description: string) => ({
    status: 400,
    body: { error: 'ERROR_CORE', error_description: description },
  });
  const statistics = (params: Record<string, unknown> = {}) => call('voximplant.statistic.get', params);

  beforeAll(async () => {
    portal = await SandboxPortal.start();
  });
  afterAll(() => portal.close());
  beforeEach(() => portal.reset());

  it('attaches a transcript to a finished call, answers its TRANSCRIPT_ID, and a repeat adds a second one', async () => {
    const callId = await finishedCall('pbx-1');
    const first = await attach({ CALL_ID: callId, MESSAGES: messages, COST: 0.12, COST_CURRENCY: 'EUR' });
    expect(first).toMatchObject({ status: 200, body: { result: { TRANSCRIPT_ID: expect.any(Number) } } });
    const firstId = first.body.result.TRANSCRIPT_ID;
    expect(await sandboxTranscripts(portal, callId)).toEqual([
      {
        TRANSCRIPT_ID: firstId,
        CALL_ID: callId,
        MESSAGES: messages,
        COST: 0.12,
        COST_CURRENCY: 'EUR',
        at: expect.any(Number),
      },
    ]);

    const again = await attach({ CALL_ID: callId, MESSAGES: messages.slice(1) });
    const secondId = again.body.result.TRANSCRIPT_ID;
    expect(secondId).not.toBe(firstId);
    const held = await sandboxTranscripts(portal, callId);
    expect(held.map((transcript) => transcript.TRANSCRIPT_ID)).toEqual([firstId, secondId]);
    expect(held[1]).toMatchObject({ MESSAGES: messages.slice(1), COST: null, COST_CURRENCY: '' });
    // The call's statistics row shows the latest.
    const row = await statistics({ FILTER: { CALL_ID: callId } });
    expect(row.body.result).toEqual([
      expect.objectContaining({ TRANSCRIPT_ID: String(secondId), TRANSCRIPT_PENDING: 'N' }),
    ]);
  });

  it('refuses a call that is not finished or unknown with the portal text, keeping nothing', async () => {
    const ringing = await register('pbx-ringing');
    expect(await attach({ CALL_ID: ringing, MESSAGES: messages })).toMatchObject(
      coreError(`Call ${ringing} is not found. Is it finished?`),
    );
    expect(await attach({ CALL_ID: 'externalCall.unknown', MESSAGES: messages })).toMatchObject(
      coreError('Call externalCall.unknown is not found. Is it finished?'),
    );
    expect(await sandboxTranscripts(portal)).toEqual([]);
    // Once finished, the same call takes it.
    await finish(ringing);
    expect((await attach({ CALL_ID: ringing, MESSAGES: messages })).status).toBe(200);
    expect(await sandboxTranscripts(portal, ringing)).toHaveLength(1);
  });

  it('validates CALL_ID and each message with the vendor texts, naming the message', async () => {
    const callId = await finishedCall('pbx-1');
    const withSecond = (change: Record<string, unknown>) => ({
      CALL_ID: callId,
      MESSAGES: [messages[0], { ...messages[1], ...change }],
    });
    expect(await attach({ MESSAGES: messages })).toMatchObject(coreError('CALL_ID should be set'));
    expect(await attach({ CALL_ID: callId })).toMatchObject(coreError('MESSAGES should be an array'));
    expect(await attach({ CALL_ID: callId, MESSAGES: 'hello' })).toMatchObject(
      coreError('MESSAGES should be an array'),
    );
    expect(await attach(withSecond({ SIDE: 'Agent' }))).toMatchObject(
      coreError('MESSAGES[1][SIDE] should be either Client or User'),
    );
    expect(await attach(withSecond({ SIDE: 'client' }))).toMatchObject(
      coreError('MESSAGES[1][SIDE] should be either Client or User'),
    );
    for (const START_TIME of [-1, 1.5, 'soon', undefined]) {
      expect(await attach(withSecond({ START_TIME }))).toMatchObject(
        coreError('MESSAGES[1][START_TIME] should be greater or equal to zero'),
      );
    }
    for (const STOP_TIME of [0, -3, 2.5, undefined]) {
      expect(await attach(withSecond({ STOP_TIME }))).toMatchObject(
        coreError('MESSAGES[1][STOP_TIME] should be greater than zero'),
      );
    }
    for (const MESSAGE of ['', '   ', undefined]) {
      expect(await attach(withSecond({ MESSAGE }))).toMatchObject(coreError('MESSAGES[1][MESSAGE] is empty'));
    }
    expect(await sandboxTranscripts(portal)).toEqual([]);
    // START_TIME 0 is the recording's start; a phrase longer than the portal's 255-character string limit is kept.
    const long = 'word '.repeat(100).trim();
    const answer = await attach(withSecond({ START_TIME: 0, STOP_TIME: 1, MESSAGE: long }));
    expect(answer.status).toBe(200);
    expect((await sandboxTranscripts(portal, callId))[0].MESSAGES[1]).toEqual({
      SIDE: 'Client',
      START_TIME: 0,
      STOP_TIME: 1,
      MESSAGE: long,
    });
  });

  it('takes the messages form-encoded and inside a batch, as clients send them', async () => {
    const callId = await finishedCall('pbx-1');
    const form = await request(`${portal.webhookUrl}telephony.call.attachTranscription`, {
      form: { CALL_ID: callId, MESSAGES: messages },
    });
    expect(form.status).toBe(200);
    const batch = await call('batch', {
      halt: 0,
      cmd: {
        transcript: `telephony.call.attachTranscription?${query({ CALL_ID: callId, MESSAGES: messages })}`,
      },
    });
    expect(batch.body.result.result.transcript).toEqual({ TRANSCRIPT_ID: expect.any(Number) });
    const held = await sandboxTranscripts(portal, callId);
    expect(held.map((transcript) => transcript.MESSAGES)).toEqual([messages, messages]);
  });

  it('needs the telephony scope', async () => {
    const callId = await finishedCall('pbx-1');
    const crmOnly = portal.addWebhook({ userId: 1, code: 'crmonly0webhook0code', scopes: ['crm'] });
    for (const method of ['telephony.call.attachTranscription', 'voximplant.statistic.get']) {
      const answer = await request(`${crmOnly.url}${method}`, {
        json: { CALL_ID: callId, MESSAGES: messages },
      });
      expect(answer).toMatchObject({ status: 403, body: { error: 'insufficient_scope' } });
    }
    expect(await sandboxTranscripts(portal)).toEqual([]);
  });

  it('runs a transcript whose answer is lost: the call statistics then show its TRANSCRIPT_ID', async () => {
    const callId = await finishedCall('pbx-lost');
    portal.injectFault({ kind: 'lose-answer', method: 'telephony.call.attachTranscription', times: 1 });
    const lost = await attach({ CALL_ID: callId, MESSAGES: messages }).catch((error: unknown) => error);
    expect((lost as Error).message).toMatch(/fetch failed/);
    const [saved] = await sandboxTranscripts(portal, callId);
    const row = await statistics({ FILTER: { EXTERNAL_CALL_ID: 'pbx-lost' } });
    expect(row.body.result).toEqual([
      expect.objectContaining({ CALL_ID: callId, TRANSCRIPT_ID: String(saved.TRANSCRIPT_ID) }),
    ]);
  });

  it('lists finished calls only, with the statistics fields, filtered by CALL_ID and EXTERNAL_CALL_ID', async () => {
    const recorded = await finishedCall('pbx-1');
    const attached = await call('telephony.externalcall.attachRecord', {
      CALL_ID: recorded,
      FILENAME: 'call.wav',
      FILE_CONTENT: Buffer.from('RIFF fake wav').toString('base64'),
    });
    const other = await finishedCall('pbx-2');
    await register('pbx-ringing');
    const all = await statistics();
    expect(all.body).toMatchObject({ total: 2 });
    expect(all.body.next).toBeUndefined();
    expect(all.body.result.map((row: Json) => row.CALL_ID)).toEqual([recorded, other]);
    expect(all.body.result[0]).toEqual({
      ID: expect.stringMatching(/^\d+$/),
      PORTAL_USER_ID: '2',
      PORTAL_NUMBER: '',
      PHONE_NUMBER: '+49 221 5550123',
      CALL_ID: recorded,
      EXTERNAL_CALL_ID: 'pbx-1',
      CALL_CATEGORY: 'external',
      CALL_LOG: null,
      CALL_DURATION: '42',
      CALL_START_DATE: '2026-11-22T10:00:00+01:00',
      CALL_RECORD_URL: null,
      CALL_VOTE: null,
      COST: '0.0000',
      COST_CURRENCY: '',
      CALL_FAILED_CODE: '200',
      CALL_FAILED_REASON: '',
      CRM_ENTITY_TYPE: null,
      CRM_ENTITY_ID: null,
      CRM_ACTIVITY_ID: null,
      REST_APP_ID: null,
      REST_APP_NAME: null,
      TRANSCRIPT_ID: null,
      TRANSCRIPT_PENDING: 'N',
      SESSION_ID: null,
      REDIAL_ATTEMPT: null,
      COMMENT: null,
      RECORD_DURATION: '42',
      RECORD_FILE_ID: attached.body.result.FILE_ID,
      CALL_TYPE: '2',
    });
    expect(all.body.result[1]).toMatchObject({ RECORD_DURATION: null, RECORD_FILE_ID: null });

    expect((await statistics({ FILTER: { CALL_ID: other } })).body).toMatchObject({
      total: 1,
      result: [expect.objectContaining({ CALL_ID: other, EXTERNAL_CALL_ID: 'pbx-2' })],
    });
    expect((await statistics({ FILTER: { EXTERNAL_CALL_ID: 'pbx-1' } })).body.result).toEqual([
      expect.objectContaining({ CALL_ID: recorded }),
    ]);
    expect((await statistics({ FILTER: { EXTERNAL_CALL_ID: 'pbx-ringing' } })).body).toMatchObject({
      result: [],
      total: 0,
    });
    // Form-encoded filters, as PHP clients write them.
    const form = await request(
      `${portal.webhookUrl}voximplant.statistic.get?${query({ FILTER: { CALL_ID: recorded } })}`,
    );
    expect(form.body.result).toEqual([expect.objectContaining({ CALL_ID: recorded })]);
  });

  it('pages by 50 with total and next, and sorts by SORT and ORDER', async () => {
    // 52 finished calls, registered and finished in batches of 25 (the bucket holds 50 requests).
    for (let from = 0; from < 52; from += 25) {
      const cmd: Record<string, string> = {};
      for (let index = from; index < Math.min(from + 25, 52); index += 1) {
        cmd[`r${index}`] = `telephony.externalcall.register?${query({
          USER_PHONE_INNER: '101',
          PHONE_NUMBER: '+49 221 5550123',
          TYPE: 2,
          EXTERNAL_CALL_ID: `pbx-${index}`,
        })}`;
        cmd[`f${index}`] =
          `telephony.externalcall.finish?${query({ USER_ID: 2, DURATION: index })}&CALL_ID=$result[r${index}][CALL_ID]`;
      }
      expect((await call('batch', { halt: 0, cmd })).body.result.result_error).toEqual([]);
    }
    const ids = portal.calls().map((one) => one.CALL_ID);
    const first = await statistics();
    expect(first.body).toMatchObject({ total: 52, next: 50 });
    expect(first.body.result).toHaveLength(50);
    const second = await statistics({ start: first.body.next });
    expect(second.body).toMatchObject({ total: 52 });
    expect(second.body.next).toBeUndefined();
    expect([...first.body.result, ...second.body.result].map((row: Json) => row.CALL_ID)).toEqual(ids);
    const longest = await statistics({
      SORT: 'CALL_DURATION',
      ORDER: 'DESC',
      FILTER: { '>=CALL_DURATION': 50 },
    });
    expect(longest.body.result.map((row: Json) => row.CALL_DURATION)).toEqual(['51', '50']);
  });
});
