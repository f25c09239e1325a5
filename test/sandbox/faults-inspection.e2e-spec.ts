import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { SandboxPortal } from '../../sandbox';
import { eventually } from '../support/bridge-harness';
import { request } from './http';

describe('sandbox portal: fault injection and the inspection API', () => {
  let portal: SandboxPortal;
  const control = (path: string, options: Parameters<typeof request>[1] = {}) =>
    request(`${portal.url}/_sandbox${path}`, options);
  const inject = (fault: Record<string, unknown>) => control('/faults', { json: fault });
  const register = (externalCallId: string) =>
    request(`${portal.webhookUrl}telephony.externalcall.register`, {
      json: { USER_ID: 1, PHONE_NUMBER: '+49 30 5550000', TYPE: 2, EXTERNAL_CALL_ID: externalCallId },
    });

  beforeAll(async () => {
    portal = await SandboxPortal.start();
  });
  afterAll(() => portal.close());
  beforeEach(() => control('/reset', { method: 'POST' }));

  it('drops every /rest and /oauth connection without an answer during an outage, until cleared', async () => {
    expect(await inject({ kind: 'outage' })).toMatchObject({
      status: 201,
      body: { id: expect.any(Number), kind: 'outage', remaining: null },
    });
    await expect(fetch(`${portal.webhookUrl}profile`)).rejects.toThrow();
    await expect(fetch(`${portal.url}/oauth/token/`, { method: 'POST' })).rejects.toThrow();
    expect((await control('/stats')).status).toBe(200);
    expect((await control('/faults', { method: 'DELETE' })).body).toEqual({ cleared: true });
    expect((await request(`${portal.webhookUrl}profile`)).status).toBe(200);
  });

  it('answers an injected HTTP error to the next `times` requests', async () => {
    await inject({ kind: 'http', status: 500, error: 'INTERNAL_SERVER_ERROR', times: 2 });
    const first = await register('a');
    expect(first).toMatchObject({
      status: 500,
      body: { error: 'INTERNAL_SERVER_ERROR', error_description: 'Internal server error' },
    });
    expect((await register('a')).status).toBe(500);
    expect((await register('a')).status).toBe(200);
    expect(portal.calls()).toHaveLength(1);
    expect((await control('/faults')).body).toEqual([]);
  });

  it('answers an injected error to calls of one method only, also inside a batch', async () => {
    await inject({
      kind: 'http',
      status: 503,
      error: 'QUERY_LIMIT_EXCEEDED',
      method: 'telephony.externalcall.finish',
    });
    expect((await register('a')).status).toBe(200);
    const direct = await request(`${portal.webhookUrl}telephony.externalcall.finish`, {
      json: { CALL_ID: 'x', USER_ID: 1 },
    });
    expect(direct).toMatchObject({
      status: 503,
      body: { error: 'QUERY_LIMIT_EXCEEDED', error_description: 'Too many requests' },
    });
    const batch = await request(`${portal.webhookUrl}batch`, {
      json: {
        halt: 0,
        cmd: {
          reg: 'telephony.externalcall.register?USER_ID=1&PHONE_NUMBER=%2B49305550001&TYPE=2',
          fin: 'telephony.externalcall.finish?CALL_ID=$result[reg][CALL_ID]&USER_ID=1',
        },
      },
    });
    expect(batch.status).toBe(200);
    expect(batch.body.result.result_error).toEqual({
      fin: { error: 'QUERY_LIMIT_EXCEEDED', error_description: 'Too many requests' },
    });
    expect(Object.keys(batch.body.result.result)).toEqual(['reg']);
  });

  it('answers OPERATION_TIME_LIMIT with 429 and an operating_reset_at a few seconds ahead', async () => {
    await inject({
      kind: 'http',
      status: 429,
      error: 'OPERATION_TIME_LIMIT',
      method: 'crm.lead.list',
      times: 1,
      resetAfterSec: 4,
    });
    const before = Math.floor(Date.now() / 1000);
    const answer = await request(`${portal.webhookUrl}crm.lead.list`);
    expect(answer.status).toBe(429);
    expect(answer.body).toMatchObject({
      error: 'OPERATION_TIME_LIMIT',
      error_description: 'Method is blocked due to operation time limit.',
    });
    expect(answer.body.time.operating_reset_at).toBeGreaterThanOrEqual(before + 3);
    expect(answer.body.time.operating_reset_at).toBeLessThanOrEqual(before + 6);
    expect((await request(`${portal.webhookUrl}crm.lead.list`)).status).toBe(200);
  });

  it('holds answers back with latency while processing the request at once', async () => {
    await inject({ kind: 'latency', ms: 1500, times: 1 });
    let answered = false;
    const pending = register('slow').then((answer) => {
      answered = true;
      return answer;
    });
    await eventually(() => Promise.resolve(portal.calls().length > 0 ? true : undefined));
    // The call is registered while its answer is still held back: a client timing out here retries.
    expect(answered).toBe(false);
    expect((await pending).status).toBe(200);
    expect((await register('fast')).status).toBe(200);
  });

  it('redirects to the new base when the portal moved', async () => {
    await inject({ kind: 'redirect', location: 'https://moved.example.com', times: 1 });
    const answer = await request(`${portal.webhookUrl}profile?x=1`);
    expect(answer.status).toBe(302);
    expect(answer.headers.get('location')).toBe(
      'https://moved.example.com/rest/1/sandbox0webhook0code/profile?x=1',
    );
    expect((await request(`${portal.webhookUrl}profile`)).status).toBe(200);
  });

  it('rejects a malformed fault with 400 naming the problem', async () => {
    expect(await inject({ kind: 'http', status: 200, error: 'X' })).toMatchObject({
      status: 400,
      body: { error: 'http needs status, 400-599' },
    });
    expect(await inject({ kind: 'flood' })).toMatchObject({
      status: 400,
      body: { error: 'kind must be one of outage, http, latency, lose-answer, redirect, decline, refuse' },
    });
  });

  it('logs each /rest request with its time, method, command count, status, error and kind of credential', async () => {
    const before = Date.now();
    await register('a');
    await request(`${portal.url}/rest/1/bad0code/profile`);
    await request(`${portal.webhookUrl}batch`, { json: { cmd: { a: 'profile', b: 'user.current' } } });
    const token = portal.issueTokens()?.access_token;
    await request(`${portal.url}/rest/app.info?auth=${token}`);
    const log = (await control('/requests')).body;
    expect(log).toEqual([
      {
        at: expect.any(Number),
        path: '/rest/1/sandbox0webhook0code/telephony.externalcall.register',
        method: 'telephony.externalcall.register',
        commands: 1,
        status: 200,
        error: null,
        auth: 'webhook',
      },
      {
        at: expect.any(Number),
        path: '/rest/1/bad0code/profile',
        method: 'profile',
        commands: 1,
        status: 401,
        error: 'INVALID_CREDENTIALS',
        auth: 'webhook',
      },
      {
        at: expect.any(Number),
        path: '/rest/1/sandbox0webhook0code/batch',
        method: 'batch',
        commands: 2,
        status: 200,
        error: null,
        auth: 'webhook',
      },
      {
        at: expect.any(Number),
        path: '/rest/app.info',
        method: 'app.info',
        commands: 1,
        status: 200,
        error: null,
        auth: 'oauth',
      },
    ]);
    expect(log[0].at).toBeGreaterThanOrEqual(before);
    expect((await control(`/requests?since=${log[3].at}`)).body.length).toBeGreaterThanOrEqual(1);
    expect((await control('/stats')).body).toEqual({
      requests: 4,
      byStatus: { 200: 3, 401: 1 },
      queryLimitExceeded: 0,
      maxRequestsInAnySecond: expect.any(Number),
      commands: 4,
      codeExchanges: 0,
      tokenRefreshes: 0,
      refreshTokenReuse: 0,
      operationTimeLimited: 0,
    });
  });

  it('keeps at most requestLogLimit entries while counting all of them', async () => {
    const small = await SandboxPortal.start({ requestLogLimit: 3 });
    try {
      for (let i = 0; i < 5; i += 1) await request(`${small.webhookUrl}profile`);
      expect(small.requests()).toHaveLength(3);
      expect(small.stats().requests).toBe(5);
    } finally {
      await small.close();
    }
  });

  it('shows calls, CRM records, tasks and users, and filters calls', async () => {
    const { CALL_ID } = (await register('pbx-7')).body.result;
    const calls = (await control('/calls?EXTERNAL_CALL_ID=pbx-7')).body;
    expect(calls).toEqual([
      {
        CALL_ID,
        EXTERNAL_CALL_ID: 'pbx-7',
        USER_ID: 1,
        PHONE_NUMBER: '+49 30 5550000',
        TYPE: 2,
        CALL_START_DATE: expect.stringMatching(/\+00:00$/),
        CRM_CREATE: false,
        CRM_SOURCE: '',
        LINE_NUMBER: '',
        SHOW: true,
        shownTo: [1],
        cardLog: [{ at: expect.any(Number), by: 'register', shown: [1], hidden: [] }],
        CRM_ENTITY_TYPE: '',
        CRM_ENTITY_ID: null,
        CRM_CREATED_LEAD: null,
        registerRequests: 1,
        registeredAt: expect.any(Number),
        finished: null,
        records: [],
      },
    ]);
    expect((await control('/calls?EXTERNAL_CALL_ID=other')).body).toEqual([]);
    expect((await control('/contacts')).body.map((c: { ID: string }) => c.ID)).toEqual(['1', '2', '3']);
    expect((await control('/companies')).body).toHaveLength(2);
    expect((await control('/leads')).body).toHaveLength(3);
    expect((await control('/deals')).body).toHaveLength(1);
    expect((await control('/users')).body).toHaveLength(5);
    expect((await control('/tasks')).body).toEqual([]);
    expect((await control('/nothing')).status).toBe(404);
  });

  it('restores the seed on reset: calls, log, faults, budget and added records are gone', async () => {
    await register('a');
    await request(`${portal.webhookUrl}crm.contact.add`, { json: { fields: { NAME: 'New' } } });
    await inject({ kind: 'latency', ms: 1 });
    expect((await control('/reset', { method: 'POST' })).body).toEqual({ reset: true });
    expect((await control('/calls')).body).toEqual([]);
    expect((await control('/requests')).body).toEqual([]);
    expect((await control('/faults')).body).toEqual([]);
    expect((await control('/contacts')).body).toHaveLength(3);
    expect((await control('/stats')).body.requests).toBe(0);
  });

  it('adds webhooks with chosen rights and moves the clock', async () => {
    const hook = await control('/webhooks', {
      json: { userId: 2, scopes: ['crm'], code: 'crmonly0hook0code' },
    });
    expect(hook).toMatchObject({
      status: 201,
      body: {
        userId: 2,
        code: 'crmonly0hook0code',
        scopes: ['crm'],
        url: `${portal.url}/rest/2/crmonly0hook0code/`,
      },
    });
    expect((await request(`${hook.body.url}crm.lead.list`)).status).toBe(200);
    expect((await request(`${hook.body.url}telephony.externalcall.register`)).status).toBe(403);
    const now = Date.now();
    const moved = await control('/clock', { json: { advanceSec: 3600 } });
    expect(moved.body.now).toBeGreaterThanOrEqual(now + 3600 * 1000);
    const credentials = (await control('/credentials')).body;
    expect(credentials.webhooks.map((h: { code: string }) => h.code)).toEqual([
      'sandbox0webhook0code',
      'crmonly0hook0code',
    ]);
    expect(credentials.apps[0].clientId).toBe(portal.oauthApp.clientId);
  });

  it('closes keep-alive connections on close', async () => {
    const extra = await SandboxPortal.start();
    await request(`${extra.webhookUrl}profile`);
    await extra.close();
    await expect(fetch(`${extra.webhookUrl}profile`)).rejects.toThrow();
  });

  it('posts to an install handler and reports what it sent', async () => {
    const received: string[] = [];
    const handler: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        received.push(body);
        res.writeHead(200).end('installed');
      });
    });
    await new Promise<void>((resolve) => handler.listen(0, '127.0.0.1', resolve));
    try {
      const handlerUrl = `http://127.0.0.1:${(handler.address() as AddressInfo).port}/oauth/install`;
      const answer = await control(`/apps/${portal.oauthApp.clientId}/install`, { json: { handlerUrl } });
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ status: 200, responseBody: 'installed', error: null });
      const form = new URLSearchParams(received[0]);
      expect(form.get('event')).toBe('ONAPPINSTALL');
      expect(form.get('auth[access_token]')).toBe(answer.body.posted['auth[access_token]']);
      expect(Object.fromEntries(form)).toMatchObject({
        'data[VERSION]': '1',
        'data[LANGUAGE_ID]': 'en',
        'auth[refresh_token]': expect.any(String),
        'auth[expires_in]': '3600',
        'auth[scope]': 'crm,calendar,task,user,telephony,log,entity',
        'auth[domain]': new URL(portal.url).host,
        'auth[server_endpoint]': `${portal.url}/rest/`,
        'auth[client_endpoint]': `${portal.url}/rest/`,
        'auth[status]': 'L',
        'auth[member_id]': 'a2c6e85a4ad3b1f6d58c17a0d3b6e4f1',
        'auth[user_id]': '1',
        'auth[application_token]': 'sandbox0application0token0000001',
      });
      // The posted tokens work, and app.info tells which application and portal they belong to.
      const info = await request(
        `${form.get('auth[client_endpoint]')}app.info?auth=${form.get('auth[access_token]')}`,
      );
      expect(info.body.result).toMatchObject({
        client_id: portal.oauthApp.clientId,
        member_id: form.get('auth[member_id]'),
        DOMAIN: form.get('auth[domain]'),
      });
      expect((await control('/apps/nope/install', { json: { handlerUrl } })).status).toBe(404);
      expect((await control(`/apps/${portal.oauthApp.clientId}/install`, { json: {} })).status).toBe(400);
    } finally {
      await new Promise((resolve) => handler.close(resolve));
    }
  });
});
