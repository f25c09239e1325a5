import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import * as qs from 'qs';
import { SandboxPortal, SandboxTenant } from '../../sandbox';
import { Json, request } from './http';

/** One sandbox process serving the root portal and tenant portals under /p/<memberId>/. */
describe('sandbox portal: many portals in one process', () => {
  let sandbox: SandboxPortal;
  let small: SandboxTenant;
  let large: SandboxTenant;
  let handler: Server;
  let handlerUrl: string;
  const posts: Json[] = [];

  const token = (params: Record<string, string>) =>
    request(`${sandbox.url}/oauth/token/`, {
      form: {
        client_id: sandbox.oauthApp.clientId,
        client_secret: sandbox.oauthApp.clientSecret,
        ...params,
      },
    });
  const callAs = (restUrl: string, accessToken: string, method: string, form?: Record<string, unknown>) =>
    request(`${restUrl}${method}?auth=${accessToken}`, form ? { form } : {});

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    small = sandbox.addPortal({ name: 'small', rateLimitRps: 2, rateBurst: 50 });
    large = sandbox.addPortal({ name: 'large', memberId: 'large0portal', rateLimitRps: 5, rateBurst: 250 });
    handler = createServer((req: IncomingMessage, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        posts.push(qs.parse(body));
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => handler.listen(0, '127.0.0.1', resolve));
    handlerUrl = `http://127.0.0.1:${(handler.address() as AddressInfo).port}/b24/install`;
  });
  afterAll(async () => {
    await sandbox.close();
    await new Promise((resolve) => handler.close(resolve));
  });
  beforeEach(() => {
    posts.length = 0;
    [sandbox, ...sandbox.portals()].forEach((portal) => portal.reset());
  });

  it('gives each tenant its own identity under /p/<memberId>/ and leaves the root as it was', async () => {
    expect(small.memberId).toMatch(/^[0-9a-f]{32}$/);
    expect(small.domain).toBe('small.sandbox.test');
    expect(small.url).toBe(`${sandbox.url}/p/${small.memberId}`);
    expect(small.restUrl).toBe(`${sandbox.url}/p/${small.memberId}/rest/`);
    expect(large.memberId).toBe('large0portal');
    expect(sandbox.portal('large0portal')).toBe(large);
    expect(sandbox.portal('nobody')).toBeUndefined();
    // The same published application, each portal its own application token.
    expect(small.oauthApp).toEqual(sandbox.oauthApp);
    const tokens = [sandbox, small, large].map(
      (portal) => portal.state.credentials.appList()[0].applicationToken,
    );
    expect(new Set(tokens).size).toBe(3);

    const [root, tenant] = await Promise.all([
      callAs(`${sandbox.url}/rest/`, sandbox.issueTokens()!.access_token, 'app.info'),
      callAs(small.restUrl, small.issueTokens()!.access_token, 'app.info'),
    ]);
    expect(root.body.result).toMatchObject({
      member_id: 'a2c6e85a4ad3b1f6d58c17a0d3b6e4f1',
      DOMAIN: new URL(sandbox.url).host,
      client_id: sandbox.oauthApp.clientId,
    });
    expect(tenant.body.result).toMatchObject({
      member_id: small.memberId,
      DOMAIN: 'small.sandbox.test',
      client_id: sandbox.oauthApp.clientId,
    });
    expect((await request(`${small.url}/_sandbox/credentials`)).body).toMatchObject({
      memberId: small.memberId,
      domain: 'small.sandbox.test',
    });
    // Each tenant has its own webhook codes: one tenant's webhook is refused on another.
    expect(small.webhookUrl).toMatch(new RegExp(`^${small.restUrl}1/[0-9a-f]{16}/$`));
    expect((await request(`${small.webhookUrl}profile`)).status).toBe(200);
    const borrowed = small.webhookUrl.replace(small.url, large.url);
    expect((await request(`${borrowed}profile`)).status).toBe(401);
    const unknown = await request(`${sandbox.url}/p/nobody/rest/profile`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'NOT_FOUND', error_description: 'Not found' });
    expect((await request(`${sandbox.url}/p/nobody/_sandbox/calls`)).status).toBe(404);
  });

  it('keeps each tenant budget its own: one exhausted answers 503 while the other still answers', async () => {
    const smallToken = small.issueTokens()!.access_token;
    const answers = await Promise.all(
      Array.from({ length: 60 }, () => callAs(small.restUrl, smallToken, 'profile')),
    );
    const limited = answers.filter((answer) => answer.status === 503);
    expect(limited.length).toBeGreaterThanOrEqual(8);
    expect(limited[0].body).toEqual({
      error: 'QUERY_LIMIT_EXCEEDED',
      error_description: 'Too many requests',
    });
    expect(small.stats().queryLimitExceeded).toBe(limited.length);

    const other = await callAs(large.restUrl, large.issueTokens()!.access_token, 'profile');
    expect(other.status).toBe(200);
    const root = await request(`${sandbox.webhookUrl}profile`);
    expect(root.status).toBe(200);
    expect(large.stats()).toMatchObject({ requests: 1, queryLimitExceeded: 0 });
    expect(sandbox.stats()).toMatchObject({ requests: 1, queryLimitExceeded: 0 });
    expect((await request(`${large.url}/_sandbox/budget`)).status).toBe(200);
  });

  it("refuses a tenant's token on another tenant and on the root, as an unknown token", async () => {
    const smallToken = small.issueTokens()!.access_token;
    const elsewhere = await Promise.all([
      callAs(large.restUrl, smallToken, 'profile'),
      callAs(`${sandbox.url}/rest/`, smallToken, 'profile'),
    ]);
    const stranger = await callAs(`${sandbox.url}/rest/`, 'f'.repeat(70), 'profile');
    expect(stranger.status).toBe(401);
    for (const answer of elsewhere) {
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual(stranger.body);
    }
    expect(stranger.body.error).toBe('invalid_token');
    expect((await callAs(small.restUrl, smallToken, 'profile')).status).toBe(200);
  });

  it("refreshes any tenant's token at the central /oauth/token/, answering as that tenant", async () => {
    const issued = large.issueTokens()!;
    expect(issued.client_endpoint).toBe(large.restUrl);
    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: issued.refresh_token });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body).toMatchObject({
      member_id: 'large0portal',
      domain: 'large.sandbox.test',
      client_endpoint: `${sandbox.url}/p/large0portal/rest/`,
      server_endpoint: `${sandbox.url}/p/large0portal/rest/`,
      status: 'L',
    });
    expect(large.stats().tokenRefreshes).toBe(1);
    expect(sandbox.stats().tokenRefreshes).toBe(0);
    const fresh = refreshed.body.access_token as string;
    expect((await callAs(large.restUrl, fresh, 'profile')).status).toBe(200);
    expect((await callAs(small.restUrl, fresh, 'profile')).status).toBe(401);
    // Single use, as on every portal: the reuse is counted on the tenant that issued it.
    const again = await token({ grant_type: 'refresh_token', refresh_token: issued.refresh_token });
    expect(again.body.error).toBe('invalid_grant');
    expect(large.stats().refreshTokenReuse).toBe(1);

    // The shared application's secret is checked for tenants' tokens too.
    const wrongSecret = await token({
      grant_type: 'refresh_token',
      refresh_token: large.issueTokens()!.refresh_token,
      client_secret: 'not-the-secret',
    });
    expect(wrongSecret.status).toBe(401);
    expect(wrongSecret.body.error).toBe('invalid_client');

    // The root's own tokens are refreshed there as before.
    const root = await token({
      grant_type: 'refresh_token',
      refresh_token: sandbox.issueTokens()!.refresh_token,
    });
    expect(root.body).toMatchObject({ member_id: 'a2c6e85a4ad3b1f6d58c17a0d3b6e4f1' });
    expect(root.body.client_endpoint).toBe(`${sandbox.url}/rest/`);
  });

  it("exchanges a tenant's authorization code at the central /oauth/token/", async () => {
    const redirectUri = 'https://bridge.example.com/oauth/callback';
    const authorized = await request(
      `${small.url}/oauth/authorize/?${new URLSearchParams({
        client_id: sandbox.oauthApp.clientId,
        response_type: 'code',
        redirect_uri: redirectUri,
      })}`,
    );
    const location = new URL(authorized.headers.get('location') ?? '');
    expect(location.searchParams.get('member_id')).toBe(small.memberId);
    expect(location.searchParams.get('domain')).toBe('small.sandbox.test');
    const exchanged = await token({
      grant_type: 'authorization_code',
      code: location.searchParams.get('code') ?? '',
      redirect_uri: redirectUri,
    });
    expect(exchanged.status).toBe(200);
    expect(exchanged.body).toMatchObject({ member_id: small.memberId, client_endpoint: small.restUrl });
    expect((await callAs(small.restUrl, exchanged.body.access_token, 'profile')).status).toBe(200);
  });

  it('posts ONAPPINSTALL with each tenant its own application token, and ONAPPUNINSTALL that ends its tokens', async () => {
    const [smallInstall, largeInstall] = await Promise.all([
      small.installApp(handlerUrl),
      large.installApp(handlerUrl),
    ]);
    expect(smallInstall?.status).toBe(200);
    expect(largeInstall?.status).toBe(200);
    expect(posts).toHaveLength(2);
    const byMember = new Map(posts.map((post) => [post.auth.member_id as string, post]));
    const smallPost = byMember.get(small.memberId);
    const largePost = byMember.get(large.memberId);
    expect(smallPost).toMatchObject({
      event: 'ONAPPINSTALL',
      auth: {
        domain: 'small.sandbox.test',
        member_id: small.memberId,
        client_endpoint: small.restUrl,
        application_token: small.state.credentials.appList()[0].applicationToken,
      },
    });
    expect(largePost?.auth.client_endpoint).toBe(large.restUrl);
    expect(smallPost?.auth.application_token).not.toBe(largePost?.auth.application_token);
    expect((await callAs(small.restUrl, smallPost?.auth.access_token, 'app.info')).status).toBe(200);

    posts.length = 0;
    const removed = await small.uninstallApp(handlerUrl);
    expect(removed?.status).toBe(200);
    // Every pair of the application on this tenant dies, those of earlier tests too.
    expect(removed?.revokedTokenPairs).toBeGreaterThanOrEqual(1);
    expect(posts).toEqual([
      {
        event: 'ONAPPUNINSTALL',
        data: { LANGUAGE_ID: 'en', CLEAN: '0' },
        ts: expect.stringMatching(/^\d+$/),
        auth: {
          domain: 'small.sandbox.test',
          server_endpoint: small.restUrl,
          status: 'L',
          client_endpoint: small.restUrl,
          member_id: small.memberId,
          application_token: smallPost?.auth.application_token,
        },
      },
    ]);
    const refresh = await token({
      grant_type: 'refresh_token',
      refresh_token: smallPost?.auth.refresh_token,
    });
    expect(refresh.status).toBe(400);
    expect(refresh.body.error).toBe('invalid_grant');
    expect((await callAs(small.restUrl, smallPost?.auth.access_token, 'profile')).body.error).toBe(
      'invalid_token',
    );
    // The other tenant keeps its install.
    const other = await token({ grant_type: 'refresh_token', refresh_token: largePost?.auth.refresh_token });
    expect(other.body.member_id).toBe(large.memberId);

    // The same over the tenant's control API.
    posts.length = 0;
    const overHttp = await request(
      `${large.url}/_sandbox/apps/${encodeURIComponent(sandbox.oauthApp.clientId)}/uninstall`,
      { json: { handlerUrl } },
    );
    expect(overHttp.status).toBe(200);
    expect(overHttp.body.revokedTokenPairs).toBeGreaterThanOrEqual(1);
    expect(posts).toEqual([
      expect.objectContaining({
        event: 'ONAPPUNINSTALL',
        auth: expect.objectContaining({ member_id: large.memberId }),
      }),
    ]);
    const afterHttp = await token({ grant_type: 'refresh_token', refresh_token: other.body.refresh_token });
    expect(afterHttp.body.error).toBe('invalid_grant');
  });

  it("keeps one tenant's CRM records and calls out of another's", async () => {
    const registered = await callAs(
      small.restUrl,
      small.issueTokens()!.access_token,
      'telephony.externalcall.register',
      {
        USER_PHONE_INNER: '101',
        PHONE_NUMBER: '+49 221 5559876',
        CALL_START_DATE: '2026-11-22T10:00:00+01:00',
        TYPE: 2,
        CRM_CREATE: 1,
        EXTERNAL_CALL_ID: 'pbx-small-1',
      },
    );
    expect(registered).toMatchObject({ status: 200 });
    const leadId = registered.body.result.CRM_ENTITY_ID as number;
    expect(small.calls({ EXTERNAL_CALL_ID: 'pbx-small-1' })).toHaveLength(1);
    expect(large.calls()).toEqual([]);
    expect(sandbox.calls()).toEqual([]);
    expect((await request(`${large.url}/_sandbox/calls`)).body).toEqual([]);
    const smallLeads = (await request(`${small.url}/_sandbox/leads`)).body as Json[];
    const largeLeads = (await request(`${large.url}/_sandbox/leads`)).body as Json[];
    expect(smallLeads.length).toBe(largeLeads.length + 1);
    const findOn = (portal: SandboxTenant) =>
      callAs(portal.restUrl, portal.issueTokens()!.access_token, 'crm.duplicate.findbycomm', {
        type: 'PHONE',
        values: ['+49 221 5559876'],
      });
    const [onSmall, onLarge] = [await findOn(small), await findOn(large)];
    expect(onSmall.body.result).toEqual({ LEAD: [Number(leadId)] });
    expect(onLarge.status).toBe(200);
    expect(onLarge.body.result).toEqual([]);
    expect(smallLeads.some((lead) => Number(lead.ID) === Number(leadId))).toBe(true);
  });

  it("takes a recording upload at the tenant's own upload address", async () => {
    const accessToken = small.issueTokens()!.access_token;
    const registered = await callAs(small.restUrl, accessToken, 'telephony.externalcall.register', {
      USER_PHONE_INNER: '101',
      PHONE_NUMBER: '+49 221 5550123',
      CALL_START_DATE: '2026-11-22T10:00:00+01:00',
      TYPE: 2,
      EXTERNAL_CALL_ID: 'pbx-upload-1',
    });
    const CALL_ID = registered.body.result.CALL_ID as string;
    await callAs(small.restUrl, accessToken, 'telephony.externalcall.finish', {
      CALL_ID,
      USER_ID: 1,
      DURATION: 30,
    });
    const attach = await callAs(small.restUrl, accessToken, 'telephony.externalcall.attachRecord', {
      CALL_ID,
      FILENAME: 'big.wav',
    });
    const uploadUrl = attach.body.result.uploadUrl as string;
    expect(uploadUrl.startsWith(`${small.url}/upload/record/`)).toBe(true);
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('RIFF tenant wav')]), 'big.wav');
    const uploaded = await fetch(uploadUrl, { method: 'POST', body: form });
    expect(uploaded.status).toBe(200);
    expect(small.calls({ CALL_ID })[0].records).toEqual([
      expect.objectContaining({ FILENAME: 'big.wav', bytes: 15, via: 'upload' }),
    ]);
    // The same address on another tenant knows no such upload.
    const elsewhere = await fetch(uploadUrl.replace(small.url, large.url), { method: 'POST', body: form });
    expect(elsewhere.status).toBe(404);
  });

  it('creates 200 portals with POST /_sandbox/portals, each answering profile and app.info as itself', async () => {
    const before = process.memoryUsage().heapUsed;
    const created = await request(`${sandbox.url}/_sandbox/portals`, {
      json: { count: 200, rateLimitRps: 5, rateBurst: 250 },
    });
    expect(created.status).toBe(201);
    const summaries = created.body as Json[];
    expect(summaries).toHaveLength(200);
    expect(new Set(summaries.map((summary) => summary.memberId)).size).toBe(200);
    const listed = (await request(`${sandbox.url}/_sandbox/portals`)).body as Json[];
    expect(listed.map((summary) => summary.memberId)).toEqual(
      expect.arrayContaining(summaries.map((summary) => summary.memberId)),
    );
    expect(listed).toHaveLength(sandbox.portals().length);

    const failures: string[] = [];
    for (let start = 0; start < summaries.length; start += 50) {
      await Promise.all(
        summaries.slice(start, start + 50).map(async (summary) => {
          const issued = await request(
            `${summary.url}/_sandbox/apps/${encodeURIComponent(sandbox.oauthApp.clientId)}/tokens`,
            { json: {} },
          );
          const [profile, info] = await Promise.all([
            callAs(summary.restUrl, issued.body.access_token, 'profile'),
            callAs(summary.restUrl, issued.body.access_token, 'app.info'),
          ]);
          if (profile.status !== 200 || profile.body.result?.ID !== '1') {
            failures.push(`${summary.memberId} profile`);
          }
          if (info.body.result?.member_id !== summary.memberId) failures.push(`${summary.memberId} app.info`);
        }),
      );
    }
    expect(failures).toEqual([]);
    const after = process.memoryUsage().heapUsed;
    console.log(
      `200 tenant portals over HTTP (created, tokens, 2 calls each): heap +${((after - before) / 1024 / 1024).toFixed(1)} MB`,
    );
  });

  it('refuses a bad POST /_sandbox/portals and a duplicate member id', async () => {
    expect((await request(`${sandbox.url}/_sandbox/portals`, { json: { count: 0 } })).status).toBe(400);
    expect(
      (await request(`${sandbox.url}/_sandbox/portals`, { json: { count: 2, memberId: 'twice' } })).status,
    ).toBe(400);
    const duplicate = await request(`${sandbox.url}/_sandbox/portals`, {
      json: { memberId: 'large0portal' },
    });
    expect(duplicate.status).toBe(400);
    expect(() => sandbox.addPortal({ memberId: 'a/b' })).toThrow(RangeError);
    const one = await request(`${sandbox.url}/_sandbox/portals`, {
      json: { memberId: 'custom-1', domain: 'acme.example.com' },
    });
    expect(one.body).toEqual([
      {
        memberId: 'custom-1',
        domain: 'acme.example.com',
        url: `${sandbox.url}/p/custom-1`,
        restUrl: `${sandbox.url}/p/custom-1/rest/`,
      },
    ]);
  });
});

describe('sandbox portal: 1 000 tenant portals', () => {
  let sandbox: SandboxPortal;
  afterAll(() => sandbox?.close());

  it('starts 1 000 tenants with the default seed well under 1 MB each', async () => {
    const gc = (global as { gc?: () => void }).gc;
    gc?.();
    const before = process.memoryUsage();
    sandbox = await SandboxPortal.start({ portals: 1000 });
    gc?.();
    const after = process.memoryUsage();
    expect(sandbox.portals()).toHaveLength(1000);
    const perTenant = (after.heapUsed - before.heapUsed) / 1000;
    console.log(
      `1000 tenant portals: heapUsed +${((after.heapUsed - before.heapUsed) / 1024 / 1024).toFixed(1)} MB ` +
        `(${(perTenant / 1024).toFixed(1)} KB per tenant${gc ? '' : ', no forced GC'}), ` +
        `rss +${((after.rss - before.rss) / 1024 / 1024).toFixed(1)} MB`,
    );
    expect(perTenant).toBeLessThan(1024 * 1024);
    const last = sandbox.portals()[999];
    const answer = await request(`${last.restUrl}profile?auth=${last.issueTokens()!.access_token}`);
    expect(answer.status).toBe(200);
  });
});
