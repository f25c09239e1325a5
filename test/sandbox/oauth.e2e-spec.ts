import { SandboxPortal } from '../../sandbox';
import { request } from './http';

const REDIRECT_URI = 'https://bridge.example.com/oauth/callback';

describe('sandbox portal: OAuth applications', () => {
  let portal: SandboxPortal;
  const authorize = (params: Record<string, string> = {}) =>
    request(
      `${portal.url}/oauth/authorize/?${new URLSearchParams({
        client_id: portal.oauthApp.clientId,
        response_type: 'code',
        redirect_uri: REDIRECT_URI,
        scope: 'crm,telephony,user',
        state: 'csrf-123',
        ...params,
      })}`,
    );
  const token = (params: Record<string, string>) =>
    request(`${portal.url}/oauth/token/`, {
      form: { client_id: portal.oauthApp.clientId, client_secret: portal.oauthApp.clientSecret, ...params },
    });
  const codeFrom = async () =>
    new URL((await authorize()).headers.get('location') ?? '').searchParams.get('code') ?? '';
  const exchange = async () =>
    (await token({ grant_type: 'authorization_code', code: await codeFrom(), redirect_uri: REDIRECT_URI }))
      .body;
  const callWith = (accessToken: string, method = 'user.current') =>
    request(`${portal.url}/rest/${method}?auth=${accessToken}`);

  beforeAll(async () => {
    portal = await SandboxPortal.start({ accessTokenTtlSec: 60 });
  });
  afterAll(() => portal.close());
  beforeEach(() => portal.reset());

  it('auto-approves an authorization with a redirect carrying code, state and the portal', async () => {
    const answer = await authorize();
    expect(answer.status).toBe(302);
    const location = new URL(answer.headers.get('location') ?? '');
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
    expect(Object.fromEntries(location.searchParams)).toEqual({
      code: expect.stringMatching(/^[0-9a-f]{70}$/),
      state: 'csrf-123',
      domain: new URL(portal.url).host,
      member_id: 'a2c6e85a4ad3b1f6d58c17a0d3b6e4f1',
      scope: 'crm,calendar,task,user,telephony,log,entity',
      server_domain: new URL(portal.url).host,
    });
  });

  it('redirects with access_denied when the user declines', async () => {
    portal.injectFault({ kind: 'decline', times: 1 });
    const location = new URL((await authorize()).headers.get('location') ?? '');
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.get('state')).toBe('csrf-123');
    expect(location.searchParams.get('code')).toBeNull();
  });

  it('refuses an authorization for an unknown client', async () => {
    expect(await authorize({ client_id: 'local.nope' })).toMatchObject({
      status: 401,
      body: { error: 'invalid_client' },
    });
  });

  it('exchanges a code once for a token pair', async () => {
    const code = await codeFrom();
    const first = await token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      access_token: expect.stringMatching(/^[0-9a-f]{70}$/),
      refresh_token: expect.stringMatching(/^[0-9a-f]{70}$/),
      expires_in: 60,
      expires: expect.any(Number),
      scope: 'crm,calendar,task,user,telephony,log,entity',
      domain: new URL(portal.url).host,
      server_endpoint: `${portal.url}/rest/`,
      client_endpoint: `${portal.url}/rest/`,
      status: 'L',
      member_id: 'a2c6e85a4ad3b1f6d58c17a0d3b6e4f1',
      user_id: 1,
      token_type: 'Bearer',
    });
    expect(first.body.expires).toBeCloseTo(Math.floor(Date.now() / 1000) + 60, -1);
    expect((await callWith(first.body.access_token)).status).toBe(200);
    const again = await token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
    expect(again).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(portal.stats().codeExchanges).toBe(1);
  });

  it('accepts the token request as query parameters too', async () => {
    const params = new URLSearchParams({
      grant_type: 'authorization_code',
      client_id: portal.oauthApp.clientId,
      client_secret: portal.oauthApp.clientSecret,
      code: await codeFrom(),
    });
    const answer = await request(`${portal.url}/oauth/token/?${params}`);
    expect(answer.status).toBe(200);
    expect(answer.body.access_token).toEqual(expect.any(String));
  });

  it('refuses an expired code, a different redirect_uri and a wrong client', async () => {
    const late = await codeFrom();
    portal.advanceClock(10 * 60 * 1000 + 1000);
    expect(await token({ grant_type: 'authorization_code', code: late })).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant', error_description: 'Authorization code has expired' },
    });
    const code = await codeFrom();
    expect(
      await token({ grant_type: 'authorization_code', code, redirect_uri: 'https://evil.example.com/cb' }),
    ).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant' },
    });
    expect(
      await token({ grant_type: 'authorization_code', code: await codeFrom(), client_secret: 'wrong' }),
    ).toMatchObject({
      status: 401,
      body: { error: 'invalid_client', error_description: 'Invalid client credentials' },
    });
    expect(await token({ grant_type: 'password' })).toMatchObject({
      status: 400,
      body: { error: 'unsupported_grant_type' },
    });
  });

  it('refreshes once per refresh token: the old pair dies, reuse is invalid_grant and counted', async () => {
    const first = await exchange();
    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.access_token).not.toBe(first.access_token);
    expect(refreshed.body.refresh_token).not.toBe(first.refresh_token);
    expect((await callWith(refreshed.body.access_token)).status).toBe(200);
    expect(await callWith(first.access_token)).toMatchObject({
      status: 401,
      body: { error: 'invalid_token' },
    });
    const reuse = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token });
    expect(reuse).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant', error_description: 'Invalid refresh token' },
    });
    expect(await token({ grant_type: 'refresh_token', refresh_token: 'unknown' })).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant' },
    });
    expect(portal.stats()).toMatchObject({ tokenRefreshes: 1, refreshTokenReuse: 1 });
    expect(
      await token({
        grant_type: 'refresh_token',
        refresh_token: refreshed.body.refresh_token,
        client_id: 'local.other',
      }),
    ).toMatchObject({
      status: 401,
      body: { error: 'invalid_client' },
    });
  });

  it('expires access tokens after their lifetime with expired_token, and a refresh brings them back', async () => {
    const pair = await exchange();
    portal.advanceClock(61 * 1000);
    expect(await callWith(pair.access_token)).toMatchObject({
      status: 401,
      body: { error: 'expired_token', error_description: 'The access token provided has expired.' },
    });
    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: pair.refresh_token });
    expect((await callWith(refreshed.body.access_token)).status).toBe(200);
  });

  it('names an expired token INVALID_TOKEN when configured as the seed spec does', async () => {
    const seedStyle = await SandboxPortal.start({ accessTokenTtlSec: 1, expiredTokenError: 'INVALID_TOKEN' });
    try {
      const pair = seedStyle.issueTokens();
      seedStyle.advanceClock(2000);
      expect(await request(`${seedStyle.url}/rest/profile?auth=${pair?.access_token}`)).toMatchObject({
        status: 401,
        body: { error: 'INVALID_TOKEN', error_description: 'The access token provided has expired.' },
      });
    } finally {
      await seedStyle.close();
    }
  });

  it('revokes every token of an application', async () => {
    const pair = await exchange();
    const revoked = await request(`${portal.url}/_sandbox/apps/${portal.oauthApp.clientId}/revoke`, {
      method: 'POST',
    });
    // Tokens survive a reset, so earlier tests' pairs die here too.
    expect(revoked.status).toBe(200);
    expect(revoked.body.revokedTokenPairs).toBeGreaterThanOrEqual(1);
    expect(
      (await request(`${portal.url}/_sandbox/apps/${portal.oauthApp.clientId}/revoke`, { method: 'POST' }))
        .body,
    ).toEqual({
      revokedTokenPairs: 0,
    });
    expect(await callWith(pair.access_token)).toMatchObject({
      status: 401,
      body: { error: 'invalid_token' },
    });
    expect(await token({ grant_type: 'refresh_token', refresh_token: pair.refresh_token })).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant' },
    });
  });

  it('checks application rights with the access-token wording', async () => {
    const limited = await SandboxPortal.start({
      seed: {
        apps: [
          {
            id: 7,
            code: 'local.crm.only',
            clientId: 'local.crmonly.1',
            clientSecret: 's3cret',
            scopes: ['crm'],
            applicationToken: 'app-token-7',
          },
        ],
      },
    });
    try {
      const pair = limited.issueTokens('local.crmonly.1');
      const answer = await request(`${limited.url}/rest/telephony.externalcall.register`, {
        headers: { Authorization: `Bearer ${pair?.access_token}` },
      });
      expect(answer).toMatchObject({
        status: 403,
        body: {
          error: 'insufficient_scope',
          error_description: 'The request requires higher privileges than provided by the access token',
        },
      });
      const info = await request(`${limited.url}/rest/app.info?auth=${pair?.access_token}`);
      expect(info.body.result).toEqual({
        ID: 7,
        CODE: 'local.crm.only',
        VERSION: 1,
        STATUS: 'L',
        INSTALLED: true,
        PAYMENT_EXPIRED: 'N',
        DAYS: null,
        LANGUAGE_ID: 'en',
        LICENSE: 'en_project',
        LICENSE_TYPE: 'project',
        LICENSE_FAMILY: 'project',
        SCOPE: ['crm'],
        client_id: 'local.crmonly.1',
        member_id: 'a2c6e85a4ad3b1f6d58c17a0d3b6e4f1',
        DOMAIN: new URL(limited.url).host,
      });
    } finally {
      await limited.close();
    }
  });

  it('issues test tokens through the control API', async () => {
    const answer = await request(`${portal.url}/_sandbox/apps/${portal.oauthApp.clientId}/tokens`, {
      json: { userId: 2 },
    });
    expect(answer.body).toMatchObject({ user_id: 2, expires_in: 60 });
    expect((await callWith(answer.body.access_token)).body.result.ID).toBe('2');
  });
});
