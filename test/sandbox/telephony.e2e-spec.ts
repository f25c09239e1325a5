import { createHash } from 'node:crypto';
import { SandboxPortal } from '../../sandbox';
import { Json, request } from './http';

describe('sandbox portal: telephony.externalcall.*', () => {
  let portal: SandboxPortal;
  const call = (method: string, params: Record<string, unknown>) =>
    request(`${portal.webhookUrl}${method}`, { json: params });
  const register = (params: Record<string, unknown> = {}) =>
    call('telephony.externalcall.register', {
      USER_PHONE_INNER: '101',
      PHONE_NUMBER: '+49 221 5550123',
      CALL_START_DATE: '2026-11-22T10:00:00+01:00',
      TYPE: 2,
      CRM_CREATE: 1,
      EXTERNAL_CALL_ID: 'pbx-1',
      ...params,
    });
  const finish = (callId: string, params: Record<string, unknown> = {}) =>
    call('telephony.externalcall.finish', { CALL_ID: callId, USER_ID: 2, DURATION: 30, ...params });
  const validationError = (description: string) => ({
    status: 400,
    body: { error: '', error_description: description },
  });

  beforeAll(async () => {
    portal = await SandboxPortal.start();
  });
  afterAll(() => portal.close());
  beforeEach(() => portal.reset());

  it('registers a call from an unknown number over the webhook, returning a CALL_ID and creating a lead', async () => {
    const answer = await register();
    expect(answer.status).toBe(200);
    const leadId = answer.body.result.CRM_CREATED_LEAD;
    expect(answer.body.result).toEqual({
      CALL_ID: expect.stringMatching(/^externalCall\.[0-9a-f]{32}\.\d{10}$/),
      CRM_CREATED_LEAD: expect.any(Number),
      CRM_CREATED_ENTITIES: [{ ENTITY_TYPE: 'LEAD', ENTITY_ID: leadId }],
      CRM_ENTITY_TYPE: 'LEAD',
      CRM_ENTITY_ID: leadId,
    });
    const lead = await request(`${portal.webhookUrl}crm.lead.get?id=${leadId}`);
    expect(lead.body.result).toMatchObject({
      TITLE: 'Call from +49 221 5550123',
      ASSIGNED_BY_ID: '2',
      SOURCE_ID: 'CALL',
      PHONE: [{ VALUE: '+49 221 5550123', VALUE_TYPE: 'WORK', TYPE_ID: 'PHONE' }],
    });
    expect(portal.calls()).toEqual([
      expect.objectContaining({
        CALL_ID: answer.body.result.CALL_ID,
        EXTERNAL_CALL_ID: 'pbx-1',
        USER_ID: 2,
        PHONE_NUMBER: '+49 221 5550123',
        TYPE: 2,
        CALL_START_DATE: '2026-11-22T10:00:00+01:00',
        CRM_CREATE: true,
        SHOW: true,
        CRM_ENTITY_TYPE: 'LEAD',
        CRM_ENTITY_ID: leadId,
        CRM_CREATED_LEAD: leadId,
        registerRequests: 1,
        finished: null,
        records: [],
      }),
    ]);
  });

  it('binds to an existing contact, then company, then lead instead of creating a lead (digits compared only)', async () => {
    const contact = await register({ PHONE_NUMBER: '+4915112345678' });
    expect(contact.body.result).toMatchObject({
      CRM_CREATED_LEAD: null,
      CRM_CREATED_ENTITIES: [],
      CRM_ENTITY_TYPE: 'CONTACT',
      CRM_ENTITY_ID: 1,
    });
    // Company 1 and lead 3 share this number: the company wins.
    const company = await register({ PHONE_NUMBER: '+49-89-12345600', EXTERNAL_CALL_ID: 'pbx-2' });
    expect(company.body.result).toMatchObject({
      CRM_CREATED_LEAD: null,
      CRM_ENTITY_TYPE: 'COMPANY',
      CRM_ENTITY_ID: 1,
    });
    const lead = await register({ PHONE_NUMBER: '+49 170 555 0101', EXTERNAL_CALL_ID: 'pbx-3' });
    expect(lead.body.result).toMatchObject({
      CRM_CREATED_LEAD: null,
      CRM_ENTITY_TYPE: 'LEAD',
      CRM_ENTITY_ID: 1,
    });
    expect((await request(`${portal.url}/_sandbox/leads`)).body).toHaveLength(3);
  });

  it('binds explicitly with CRM_ENTITY_TYPE and CRM_ENTITY_ID, and creates nothing without CRM_CREATE', async () => {
    const explicit = await register({ CRM_ENTITY_TYPE: 'contact', CRM_ENTITY_ID: 3 });
    expect(explicit.body.result).toMatchObject({
      CRM_CREATED_LEAD: null,
      CRM_ENTITY_TYPE: 'CONTACT',
      CRM_ENTITY_ID: 3,
    });
    const unbound = await register({ CRM_CREATE: 0, EXTERNAL_CALL_ID: 'pbx-2' });
    expect(unbound.body.result).toMatchObject({
      CRM_CREATED_LEAD: null,
      CRM_CREATED_ENTITIES: [],
      CRM_ENTITY_TYPE: '',
      CRM_ENTITY_ID: null,
    });
    expect(portal.inspection.crm('LEAD')).toHaveLength(3);
  });

  it('validates register parameters with the portal texts', async () => {
    expect(await register({ USER_PHONE_INNER: '555' })).toMatchObject(
      validationError('USER_ID or USER_PHONE_INNER should be set'),
    );
    expect(await register({ USER_PHONE_INNER: undefined })).toMatchObject(
      validationError('USER_ID or USER_PHONE_INNER should be set'),
    );
    // Extension 109 belongs to an inactive employee.
    expect(await register({ USER_PHONE_INNER: '109' })).toMatchObject(
      validationError('USER_ID or USER_PHONE_INNER should be set'),
    );
    expect(await register({ TYPE: 6 })).toMatchObject(validationError('Unknown TYPE'));
    expect(await register({ TYPE: 'x' })).toMatchObject(validationError('Unknown TYPE'));
    expect(await register({ CALL_START_DATE: '2026-11-22 10:00:00' })).toMatchObject(
      validationError('CALL_START_DATE should be in the ISO-8601 format'),
    );
    expect(await register({ CALL_START_DATE: '2026-11-22T10:00:00' })).toMatchObject(
      validationError('CALL_START_DATE should be in the ISO-8601 format'),
    );
    expect(await register({ PHONE_NUMBER: 'withheld' })).toMatchObject(
      validationError('Unsupported phone number format'),
    );
    expect(portal.calls()).toHaveLength(0);
    expect(
      (await register({ USER_ID: 3, USER_PHONE_INNER: undefined, CALL_START_DATE: '2026-11-22T09:00:00Z' }))
        .status,
    ).toBe(200);
  });

  it('answers a repeated register of an unfinished call within 30 minutes with the same CALL_ID and no second lead', async () => {
    const first = await register();
    const again = await register({ CALL_START_DATE: '2026-11-22T10:00:05+01:00' });
    expect(again.status).toBe(200);
    expect(again.body.result).toEqual(first.body.result);
    expect(portal.calls()).toEqual([
      expect.objectContaining({ CALL_ID: first.body.result.CALL_ID, registerRequests: 2 }),
    ]);
    expect(portal.inspection.crm('LEAD')).toHaveLength(4);
    // Another PBX call id, user, type, number or line is another call.
    const others = [
      await register({ EXTERNAL_CALL_ID: 'pbx-2' }),
      await register({ USER_PHONE_INNER: '102' }),
      await register({ TYPE: 3 }),
      await register({ PHONE_NUMBER: '+49 221 5550124' }),
      await register({ LINE_NUMBER: '+4922155500' }),
    ];
    const ids = new Set(others.map((answer: Json) => answer.body.result.CALL_ID));
    expect(ids.size).toBe(5);
    expect(ids.has(first.body.result.CALL_ID)).toBe(false);
    // The same line again is the same call.
    const sameLine = await register({ LINE_NUMBER: '+4922155500' });
    expect(sameLine.body.result.CALL_ID).toBe(others[4].body.result.CALL_ID);
  });

  it('registers a new call once the first one is finished, bound to the lead the first one created', async () => {
    const first = await register();
    expect((await finish(first.body.result.CALL_ID)).status).toBe(200);
    // The first call's lead now has the number, so the second call binds to it.
    const second = await register();
    expect(second.body.result.CALL_ID).not.toBe(first.body.result.CALL_ID);
    expect(second.body.result).toMatchObject({
      CRM_CREATED_LEAD: null,
      CRM_ENTITY_TYPE: 'LEAD',
      CRM_ENTITY_ID: first.body.result.CRM_CREATED_LEAD,
    });
    expect(portal.calls()).toHaveLength(2);
  });

  it('registers a new call once 30 minutes have passed', async () => {
    const first = await register({ CRM_CREATE: 0 });
    portal.advanceClock(30 * 60 * 1000);
    const second = await register({ CRM_CREATE: 0 });
    expect(second.body.result.CALL_ID).not.toBe(first.body.result.CALL_ID);
  });

  it('finishes a call once: the answer describes it, a second finish fails', async () => {
    const { CALL_ID, CRM_ENTITY_ID } = (await register()).body.result;
    const answer = await finish(CALL_ID, { DURATION: 121, COST: 0.12, COST_CURRENCY: 'EUR', VOTE: 4 });
    expect(answer.status).toBe(200);
    expect(answer.body.result).toEqual({
      CALL_ID,
      ID: expect.stringMatching(/^\d+$/),
      EXTERNAL_CALL_ID: 'pbx-1',
      PORTAL_USER_ID: '2',
      PHONE_NUMBER: '+49 221 5550123',
      CALL_TYPE: '2',
      CALL_DURATION: '121',
      CALL_START_DATE: '2026-11-22T10:00:00+01:00',
      CALL_FAILED_CODE: '200',
      CALL_FAILED_REASON: '',
      COST: '0.1200',
      COST_CURRENCY: 'EUR',
      CALL_VOTE: '4',
      CRM_ENTITY_TYPE: 'LEAD',
      CRM_ENTITY_ID: String(CRM_ENTITY_ID),
      CRM_ACTIVITY_ID: expect.stringMatching(/^\d+$/),
    });
    expect(portal.calls({ CALL_ID })[0]).toMatchObject({
      shownTo: [],
      finished: { USER_ID: 2, DURATION: 121, STATUS_CODE: '200', FAILED_REASON: '', at: expect.any(Number) },
    });
    const again = await finish(CALL_ID);
    expect(again).toMatchObject(
      validationError('Call is not found (call should be registered prior to finishing)'),
    );
    expect(await finish('externalCall.unknown.1')).toMatchObject(
      validationError('Call is not found (call should be registered prior to finishing)'),
    );
  });

  it('defaults STATUS_CODE to 200 for a talk and 304 for a missed call, and keeps a given one', async () => {
    const ids = [];
    for (const external of ['a', 'b', 'c']) {
      ids.push((await register({ EXTERNAL_CALL_ID: external, CRM_CREATE: 0 })).body.result.CALL_ID);
    }
    expect((await finish(ids[0], { DURATION: 10 })).body.result.CALL_FAILED_CODE).toBe('200');
    expect((await finish(ids[1], { DURATION: 0 })).body.result.CALL_FAILED_CODE).toBe('304');
    const failed = await finish(ids[2], { DURATION: 0, STATUS_CODE: 'OTHER', FAILED_REASON: 'trunk down' });
    expect(failed.body.result).toMatchObject({ CALL_FAILED_CODE: 'OTHER', CALL_FAILED_REASON: 'trunk down' });
  });

  it('attaches a recording only after finish, and a repeated attach replaces it', async () => {
    const { CALL_ID } = (await register()).body.result;
    const early = await call('telephony.externalcall.attachRecord', {
      CALL_ID,
      RECORD_URL: 'https://pbx.example.com/rec/1.mp3',
    });
    expect(early).toMatchObject(
      validationError('Call is not found in the statistic table. It looks like it is not finished yet.'),
    );
    await finish(CALL_ID);
    const byUrl = await call('telephony.externalcall.attachRecord', {
      CALL_ID,
      RECORD_URL: 'https://pbx.example.com/rec/1.mp3',
    });
    expect(byUrl).toMatchObject({ status: 200, body: { result: { FILE_ID: expect.any(Number) } } });
    const content = Buffer.from('RIFF fake wav').toString('base64');
    const byFile = await call('telephony.externalcall.attachRecord', {
      CALL_ID,
      FILENAME: 'call.wav',
      FILE_CONTENT: content,
    });
    expect(byFile.body.result.FILE_ID).not.toBe(byUrl.body.result.FILE_ID);
    expect(portal.calls({ CALL_ID })[0].records).toEqual([
      {
        RECORD_URL: 'https://pbx.example.com/rec/1.mp3',
        FILE_ID: byUrl.body.result.FILE_ID,
        via: 'url',
        at: expect.any(Number),
      },
      {
        FILENAME: 'call.wav',
        bytes: 13,
        sha256: createHash('sha256').update('RIFF fake wav').digest('hex'),
        via: 'content',
        FILE_ID: byFile.body.result.FILE_ID,
        at: expect.any(Number),
      },
    ]);
    // With a file name but neither content nor URL, the answer says where to upload the file.
    const upload = await call('telephony.externalcall.attachRecord', { CALL_ID, FILENAME: 'big.wav' });
    expect(upload.body.result.uploadUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/upload\/record\//);
    expect(await call('telephony.externalcall.attachRecord', { CALL_ID, FILENAME: 'x.ogg' })).toMatchObject(
      validationError('FILENAME should end in .mp3 or .wav'),
    );
    expect(await call('telephony.externalcall.attachRecord', { CALL_ID })).toMatchObject(
      validationError('RECORD_URL or FILENAME with FILE_CONTENT should be set'),
    );
  });

  it('accepts a base64 FILE_CONTENT longer than 255 characters', async () => {
    const { CALL_ID } = (await register()).body.result;
    await finish(CALL_ID);
    const content = Buffer.alloc(3000, 1).toString('base64');
    const answer = await call('telephony.externalcall.attachRecord', {
      CALL_ID,
      FILENAME: 'call.mp3',
      FILE_CONTENT: content,
    });
    expect(answer.status).toBe(200);
  });

  it('shows and hides the call card for one user or a list', async () => {
    const { CALL_ID } = (await register({ SHOW: 0 })).body.result;
    expect(portal.calls({ CALL_ID })[0]).toMatchObject({ SHOW: false, shownTo: [] });
    expect(
      (
        await request(
          `${portal.webhookUrl}telephony.externalcall.show?CALL_ID=${CALL_ID}&USER_ID[]=2&USER_ID[]=3`,
        )
      ).body.result,
    ).toBe(true);
    expect(portal.calls({ CALL_ID })[0].shownTo).toEqual([2, 3]);
    expect((await call('telephony.externalcall.hide', { CALL_ID, USER_ID: 2 })).body.result).toBe(true);
    expect(portal.calls({ CALL_ID })[0].shownTo).toEqual([3]);
    expect(
      await call('telephony.externalcall.show', { CALL_ID: 'externalCall.nope.1', USER_ID: 2 }),
    ).toMatchObject(validationError('Call is not found'));
  });

  it('finish closes the card of the user it names only; the card log records every change', async () => {
    const { CALL_ID } = (await register({ EXTERNAL_CALL_ID: 'pbx-card-log' })).body.result;
    await call('telephony.externalcall.show', { CALL_ID, USER_ID: [3, 4] });
    await call('telephony.externalcall.hide', { CALL_ID, USER_ID: 4 });
    expect((await finish(CALL_ID, { USER_ID: 3 })).status).toBe(200);
    const [card] = portal.calls({ CALL_ID });
    expect(card.shownTo).toEqual([2]);
    expect(card.cardLog.map(({ by, shown, hidden }) => ({ by, shown, hidden }))).toEqual([
      { by: 'register', shown: [2], hidden: [] },
      { by: 'show', shown: [3, 4], hidden: [] },
      { by: 'hide', shown: [], hidden: [4] },
      { by: 'finish', shown: [], hidden: [3] },
    ]);
  });

  it('finds CRM entities by phone number with their responsible employee', async () => {
    const answer = await call('telephony.externalCall.searchCrmEntities', {
      PHONE_NUMBER: '+49 89 1234 5600',
    });
    expect(answer.body.result).toEqual([
      {
        CRM_ENTITY_TYPE: 'COMPANY',
        CRM_ENTITY_ID: 1,
        ASSIGNED_BY_ID: 3,
        NAME: 'Acme GmbH',
        ASSIGNED_BY: expect.objectContaining({ ID: '3', USER_PHONE_INNER: '102' }),
      },
      {
        CRM_ENTITY_TYPE: 'LEAD',
        CRM_ENTITY_ID: 3,
        ASSIGNED_BY_ID: 4,
        NAME: 'Acme follow-up',
        ASSIGNED_BY: expect.objectContaining({ ID: '4', USER_PHONE_INNER: '103' }),
      },
    ]);
    const contact = await call('telephony.externalcall.searchCrmEntities', { PHONE_NUMBER: '4915112345678' });
    expect(contact.body.result).toEqual([
      expect.objectContaining({ CRM_ENTITY_TYPE: 'CONTACT', CRM_ENTITY_ID: 1, NAME: 'Max Mustermann' }),
    ]);
    expect(
      (await call('telephony.externalcall.searchCrmEntities', { PHONE_NUMBER: '+1 000' })).body.result,
    ).toEqual([]);
  });
});
