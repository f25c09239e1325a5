import axios from 'axios';
import { stringify } from 'qs';
import { SandboxPortal } from '../../sandbox';
import { ADMIN_TOKEN, callBodies } from '../support/bridge-harness';
import { sandboxStats } from '../support/sandbox-inspect';
import {
  authorizeInBrowser,
  browserGet,
  completeInBrowser,
  installApp,
  OAuthBridge,
  postCalls,
  startOAuthBridge,
  tempDir,
  untilAllFinished,
} from '../auth/oauth-harness';

/** Employee 2 of the default seed (Anna, sales) is no administrator; employee 1 is. */
const NON_ADMIN = 2;

describe('OAuth: who may replace the bridge tokens', () => {
  let sandbox: SandboxPortal;
  let workspace: ReturnType<typeof tempDir>;
  let bridge: OAuthBridge;

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
  });
  afterAll(() => sandbox.close());
  beforeEach(async () => {
    sandbox.reset();
    workspace = tempDir();
    bridge = await startOAuthBridge(sandbox, workspace.dir);
  });
  afterEach(async () => {
    await bridge.close();
    workspace.remove();
  });

  const installPost = (tokens: ReturnType<SandboxPortal['issueTokens']>) =>
    bridge.http
      .post('/oauth/install')
      .type('form')
      .send(
        stringify({
          event: 'ONAPPINSTALL',
          auth: {
            access_token: tokens!.access_token,
            refresh_token: tokens!.refresh_token,
            member_id: tokens!.member_id,
            domain: tokens!.domain,
            client_endpoint: tokens!.client_endpoint,
            application_token: 'sandbox0application0token0000001',
          },
        }),
      );

  it('the sandbox portal answers user.admin for the token user', async () => {
    const ask = async (userId: number) =>
      (
        await axios.post(
          `${sandbox.url}/rest/user.admin`,
          {},
          {
            headers: { Authorization: `Bearer ${sandbox.issueTokens(undefined, userId)!.access_token}` },
          },
        )
      ).data.result;
    expect(await ask(1)).toBe(true);
    expect(await ask(NON_ADMIN)).toBe(false);
  });

  it('/oauth/start needs the admin token: Bearer, Basic password or ?token=', async () => {
    const start = `${bridge.url}/oauth/start`;
    const refused = await browserGet(start);
    expect(refused.status).toBe(401);
    expect(JSON.stringify(refused.body)).toContain('ADMIN_TOKEN');
    expect((await axios.get(start, { validateStatus: () => true })).headers['www-authenticate']).toMatch(
      /^Basic /,
    );
    expect((await browserGet(`${start}?token=wrong-token`)).status).toBe(401);
    expect((await browserGet(start, { Authorization: 'Bearer wrong-token' })).status).toBe(401);

    const basic = `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}`;
    for (const answer of [
      await browserGet(`${start}?token=${ADMIN_TOKEN}`),
      await browserGet(start, { Authorization: `Bearer ${ADMIN_TOKEN}` }),
      await browserGet(start, { Authorization: basic }),
    ]) {
      expect(answer.status).toBe(302);
      expect(answer.location).toContain(`${sandbox.url}/oauth/authorize/`);
    }
    const withCookie = await axios.get(`${start}?token=${ADMIN_TOKEN}`, {
      maxRedirects: 0,
      validateStatus: () => true,
    });
    const [cookie] = withCookie.headers['set-cookie'] ?? [];
    expect(cookie).toMatch(/^bridge_oauth_state=[\w-]{20,};/);
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).toMatch(/; Path=\/oauth\/callback/);
  });

  it('/oauth/start is closed without ADMIN_TOKEN on the bridge, with a 403 naming it', async () => {
    await bridge.close();
    bridge = await startOAuthBridge(sandbox, workspace.dir, { ADMIN_TOKEN: '' });
    const answer = await browserGet(`${bridge.url}/oauth/start?token=anything`);
    expect(answer.status).toBe(403);
    expect(JSON.stringify(answer.body)).toContain('ADMIN_TOKEN');
  });

  it('completes the callback only in the browser that started it', async () => {
    const flow = await authorizeInBrowser(bridge);
    // Another browser (a link an attacker sends, carrying their own code and state) has no state cookie.
    const elsewhere = await browserGet(flow.callbackUrl);
    expect(elsewhere.status).toBe(400);
    expect(JSON.stringify(elsewhere.body)).toContain('/oauth/start');
    const otherCookie = await completeInBrowser({
      ...flow,
      cookie: 'bridge_oauth_state=someone-elses-state',
    });
    expect(otherCookie.status).toBe(400);
    expect(await bridge.storedTokens()).toBeUndefined();
    expect((await sandboxStats(sandbox)).codeExchanges).toBe(0);

    const done = await completeInBrowser(flow);
    expect(done.status).toBe(200);
    expect(done.cookies).toMatch(/^bridge_oauth_state=$/);
    expect((await sandboxStats(sandbox)).codeExchanges).toBe(1);
  });

  it('keeps a working pair when the code flow is authorised by a user who is no administrator', async () => {
    expect((await installApp(sandbox, bridge)).status).toBe(200);
    const working = await bridge.storedTokens();

    const byEmployee = await completeInBrowser(await authorizeInBrowser(bridge, NON_ADMIN));
    expect(byEmployee.status).toBe(403);
    expect(JSON.stringify(byEmployee.body)).toContain('not a portal administrator');
    expect(await bridge.storedTokens()).toEqual(working);

    const byAdmin = await completeInBrowser(await authorizeInBrowser(bridge, 1));
    expect(byAdmin.status).toBe(200);
    expect((await bridge.storedTokens())?.accessToken).not.toBe(working?.accessToken);
    await postCalls(bridge, callBodies('after-admin', 2)[0]);
    await untilAllFinished(sandbox, 'after-admin', 2);
  });

  it('replaces a working pair by an install post only when user.admin confirms; the first pair needs app.info only', async () => {
    // No pair yet: a real token of the application is the first pair, whoever's it is.
    const first = sandbox.issueTokens(undefined, NON_ADMIN);
    expect((await installPost(first)).status).toBe(200);
    expect((await bridge.storedTokens())?.accessToken).toBe(first!.access_token);

    const adminChecks = () => sandbox.requests().filter((entry) => entry.method === 'user.admin').length;
    const replacement = sandbox.issueTokens(undefined, NON_ADMIN);
    const refused = await installPost(replacement);
    expect(refused.status).toBe(403);
    expect(JSON.stringify(refused.body)).toContain('not a portal administrator');
    expect((await bridge.storedTokens())?.accessToken).toBe(first!.access_token);
    expect(adminChecks()).toBe(1);

    const byAdmin = sandbox.issueTokens(undefined, 1);
    expect((await installPost(byAdmin)).status).toBe(200);
    expect((await bridge.storedTokens())?.accessToken).toBe(byAdmin!.access_token);
    expect(adminChecks()).toBe(2);
  });
});
