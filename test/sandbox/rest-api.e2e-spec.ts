import { SandboxPortal } from '../../sandbox';
import { portalTimeShape, query, request } from './http';

describe('sandbox portal: address forms, parameters, envelope and errors', () => {
  let portal: SandboxPortal;

  beforeAll(async () => {
    portal = await SandboxPortal.start({
      seed: {
        webhooks: [
          { userId: 1, code: 'sandbox0webhook0code', scopes: ['crm', 'task', 'user', 'telephony'] },
          { userId: 2, code: 'crmonly0webhook', scopes: ['crm'] },
        ],
      },
    });
  });
  afterAll(() => portal.close());
  beforeEach(() => portal.reset());

  it('exposes its base, default webhook and OAuth application', () => {
    expect(portal.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(portal.webhookUrl).toBe(`${portal.url}/rest/1/sandbox0webhook0code/`);
    expect(portal.oauthApp).toEqual({
      clientId: expect.stringMatching(/^local\./),
      clientSecret: expect.any(String),
    });
  });

  it('answers a webhook call with the success envelope', async () => {
    const answer = await request(`${portal.webhookUrl}profile`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(answer.body).toEqual({
      result: {
        ID: '1',
        ADMIN: true,
        NAME: 'Admin',
        LAST_NAME: 'Sandbox',
        PERSONAL_GENDER: '',
        PERSONAL_PHOTO: null,
        TIME_ZONE: '',
        TIME_ZONE_OFFSET: 0,
      },
      time: portalTimeShape,
    });
  });

  it('accepts the .json suffix, any case of the method name, the v1 prefix and the API-Version header', async () => {
    const forms = [
      `${portal.webhookUrl}user.current.json`,
      `${portal.webhookUrl}USER.Current`,
      `${portal.url}/rest/v1/1/sandbox0webhook0code/user.current`,
    ];
    for (const url of forms) {
      const answer = await request(url, { headers: { 'API-Version': 'v1' } });
      expect({ url, status: answer.status, id: answer.body.result?.ID }).toEqual({
        url,
        status: 200,
        id: '1',
      });
    }
  });

  it('takes parameters from the query, a JSON body and a nested form body alike', async () => {
    const viaQuery = await request(
      `${portal.webhookUrl}user.get?${query({ FILTER: { UF_PHONE_INNER: '101' } })}`,
    );
    const viaJson = await request(`${portal.webhookUrl}user.get`, {
      json: { FILTER: { UF_PHONE_INNER: '101' } },
    });
    const viaForm = await request(`${portal.webhookUrl}user.get`, { form: 'FILTER%5BUF_PHONE_INNER%5D=101' });
    for (const answer of [viaQuery, viaJson, viaForm]) {
      expect(answer.status).toBe(200);
      expect(answer.body.result.map((user: { ID: string }) => user.ID)).toEqual(['2']);
      expect(answer.body.total).toBe(1);
    }
    const added = await request(`${portal.webhookUrl}crm.lead.add`, {
      form: 'fields[TITLE]=Form%20lead&fields[PHONE][0][VALUE]=%2B491701234567&fields[PHONE][0][VALUE_TYPE]=WORK',
    });
    expect(added.status).toBe(200);
    const listed = await request(`${portal.webhookUrl}crm.lead.get?id=${added.body.result}`);
    expect(listed.body.result).toMatchObject({
      TITLE: 'Form lead',
      PHONE: [{ VALUE: '+491701234567', VALUE_TYPE: 'WORK', TYPE_ID: 'PHONE' }],
    });
    const selected = await request(
      `${portal.webhookUrl}crm.lead.list?SELECT[]=TITLE&SELECT[]=PHONE&${query({ filter: { ID: added.body.result } })}`,
    );
    expect(selected.body.result).toEqual([
      {
        ID: String(added.body.result),
        TITLE: 'Form lead',
        PHONE: [expect.objectContaining({ VALUE: '+491701234567' })],
      },
    ]);
  });

  it('calls with an OAuth token in the auth parameter, in a form body, or as a Bearer header', async () => {
    const token = portal.issueTokens()?.access_token ?? '';
    const inQuery = await request(`${portal.url}/rest/user.current?auth=${token}`);
    const inBody = await request(`${portal.url}/rest/user.current.json`, { form: { auth: token } });
    const inHeader = await request(`${portal.url}/rest/v1/user.current`, {
      headers: { Authorization: `Bearer ${token}`, 'API-Version': 'v1' },
    });
    for (const answer of [inQuery, inBody, inHeader]) {
      expect([answer.status, answer.body.result.ID]).toEqual([200, '1']);
    }
  });

  it('rejects a wrong webhook code, a webhook of another user and a missing credential with 401', async () => {
    expect(await request(`${portal.url}/rest/1/wrong0code/profile`)).toMatchObject({
      status: 401,
      body: { error: 'INVALID_CREDENTIALS', error_description: 'Invalid request credentials' },
    });
    expect(await request(`${portal.url}/rest/3/sandbox0webhook0code/profile`)).toMatchObject({
      status: 401,
      body: { error: 'INVALID_CREDENTIALS' },
    });
    const none = await request(`${portal.url}/rest/profile`);
    expect(none).toMatchObject({
      status: 401,
      body: { error: 'NO_AUTH_FOUND', error_description: 'Wrong authorization data' },
    });
    expect(await request(`${portal.url}/rest/profile?auth=not0a0token`)).toMatchObject({
      status: 401,
      body: { error: 'invalid_token', error_description: 'The access token provided is invalid.' },
    });
  });

  it('answers 404 ERROR_METHOD_NOT_FOUND for an unknown method', async () => {
    const answer = await request(`${portal.webhookUrl}crm.nothing.here`);
    expect(answer.status).toBe(404);
    expect(answer.body).toEqual({ error: 'ERROR_METHOD_NOT_FOUND', error_description: 'Method not found!' });
  });

  it('answers 403 insufficient_scope for a method outside the webhook rights', async () => {
    const crmOnly = `${portal.url}/rest/2/crmonly0webhook/`;
    const expected = {
      status: 403,
      body: {
        error: 'insufficient_scope',
        error_description: 'The request requires higher privileges than provided by the webhook token',
      },
    };
    expect(await request(`${crmOnly}telephony.externalcall.register`)).toMatchObject(expected);
    expect(await request(`${crmOnly}user.get`)).toMatchObject(expected);
    expect(await request(`${crmOnly}tasks.task.list`)).toMatchObject(expected);
    expect(await request(`${portal.webhookUrl}calendar.nothing`)).toMatchObject({ status: 404 });
    for (const general of ['profile', 'user.current', 'app.info', 'crm.lead.list']) {
      expect({ general, status: (await request(`${crmOnly}${general}`)).status }).toEqual({
        general,
        status: 200,
      });
    }
  });

  it('rejects a parameter string over 255 characters with 400', async () => {
    const ok = await request(`${portal.webhookUrl}crm.lead.add`, {
      json: { fields: { TITLE: 'x'.repeat(255) } },
    });
    expect(ok.status).toBe(200);
    const tooLong = await request(`${portal.webhookUrl}crm.lead.add`, {
      json: { fields: { TITLE: 'x'.repeat(256) } },
    });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body).toEqual({
      error: 'INVALID_ARGUMENT',
      error_description: 'fields[TITLE] is longer than 255 characters',
    });
    const register = await request(`${portal.webhookUrl}telephony.externalcall.register`, {
      json: { USER_ID: 1, PHONE_NUMBER: '+4930123', TYPE: 2, EXTERNAL_CALL_ID: 'c'.repeat(256) },
    });
    expect(register).toMatchObject({
      status: 400,
      body: {
        error: 'INVALID_ARGUMENT',
        error_description: 'EXTERNAL_CALL_ID is longer than 255 characters',
      },
    });
    expect(portal.calls()).toHaveLength(0);
  });

  it('rejects a POST body over 32 MB with 413 and an error body', async () => {
    const big = JSON.stringify({ fields: { COMMENTS: 'x'.repeat(32 * 1024 * 1024) } });
    const answer = await request(`${portal.webhookUrl}crm.lead.add`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      form: big,
    });
    expect(answer.status).toBe(413);
    expect(answer.body).toEqual({
      error: 'INVALID_REQUEST',
      error_description: 'POST request size exceeds the limit of 32 MB',
    });
  });

  it('rejects a body that is not valid JSON with 400 INVALID_REQUEST', async () => {
    const answer = await fetch(`${portal.webhookUrl}profile`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"broken',
    });
    expect(answer.status).toBe(400);
    expect(await answer.json()).toEqual({
      error: 'INVALID_REQUEST',
      error_description: 'Request body is not valid JSON',
    });
  });

  it('answers 404 outside /rest, /oauth and /_sandbox', async () => {
    expect(await request(`${portal.url}/index.php`)).toMatchObject({
      status: 404,
      body: { error: 'NOT_FOUND' },
    });
  });
});
