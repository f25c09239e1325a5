import { PortalRuntime } from '../../src/tenancy/portal-runtime';
import { SandboxPortal } from '../../sandbox';
import { TokenStore } from '../../src/store/token-store';
import { callBodies, eventually } from '../support/bridge-harness';
import { freePort } from '../support/bridge-process';
import {
  callState,
  installApp,
  OAuthBridge,
  PORTAL_ID,
  postCalls,
  settledPortalHealth,
  sleep,
  startOAuthBridge,
  tempDir,
  untilAllFinished,
} from './oauth-harness';
import { sandboxStats } from '../support/sandbox-inspect';
import { untilAccessTokenExpired } from '../support/wait';

/** One portal call through the bridge's own client (budget, credentials, renewal), as delivery makes them. */
const appInfo = (bridge: OAuthBridge) =>
  bridge.app.get(PortalRuntime).client.call<{ client_id: string }>('app.info', {});

describe('OAuth tokens: refresh', () => {
  let workspace: ReturnType<typeof tempDir>;
  const opened: { close(): Promise<unknown> }[] = [];
  const open = <T extends { close(): Promise<unknown> }>(thing: T): T => {
    opened.push(thing);
    return thing;
  };

  beforeEach(() => {
    workspace = tempDir();
  });
  afterEach(async () => {
    for (const thing of opened.splice(0).reverse()) await thing.close();
    workspace.remove();
  });

  it('delivers 200 calls while access tokens expire every 2 s: no failed call, no refresh token used twice', async () => {
    const sandbox = open(await SandboxPortal.start({ accessTokenTtlSec: 2 }));
    // Small batches spread the delivery over several token lifetimes.
    const bridge = open(await startOAuthBridge(sandbox, workspace.dir, { B24_BATCH_SIZE: '5' }));
    expect((await installApp(sandbox, bridge)).status).toBe(200);

    for (const body of callBodies('ttl', 200)) {
      await postCalls(bridge, body);
      // Load shaping, not a wait: the posts span several 2 s token lifetimes (the portal's clock rule).
      await sleep(300);
    }
    await untilAllFinished(sandbox, 'ttl', 200, 120_000);

    const stats = await sandboxStats(sandbox);
    expect(stats.refreshTokenReuse).toBe(0);
    expect(stats.tokenRefreshes).toBeGreaterThanOrEqual(2);
    expect(await settledPortalHealth(bridge)).toMatchObject({
      failedCalls: 0,
      queueDepth: 0,
      authorisation: 'authorised',
    });
    expect(sandbox.calls().filter((call) => call.EXTERNAL_CALL_ID?.startsWith('ttl-'))).toHaveLength(200);
  });

  it('refreshes once for many concurrent requests at expiry', async () => {
    const sandbox = open(await SandboxPortal.start({ accessTokenTtlSec: 2 }));
    const bridge = open(await startOAuthBridge(sandbox, workspace.dir));
    await installApp(sandbox, bridge);
    await untilAccessTokenExpired(bridge.storedTokens);

    const before = (await sandboxStats(sandbox)).tokenRefreshes;
    const answers = await Promise.all(Array.from({ length: 10 }, () => appInfo(bridge)));
    expect(answers.every((answer) => answer.client_id === sandbox.oauthApp.clientId)).toBe(true);
    expect((await sandboxStats(sandbox)).tokenRefreshes - before).toBe(1);
    expect((await sandboxStats(sandbox)).refreshTokenReuse).toBe(0);
  });

  it('refreshes once across two bridges sharing the store (the lease row, not process memory)', async () => {
    const sandbox = open(await SandboxPortal.start({ accessTokenTtlSec: 2 }));
    const first = open(await startOAuthBridge(sandbox, workspace.dir));
    const second = open(await startOAuthBridge(sandbox, workspace.dir));
    await installApp(sandbox, first);
    await Promise.all([appInfo(first), appInfo(second)]);
    await untilAccessTokenExpired(first.storedTokens);

    const before = (await sandboxStats(sandbox)).tokenRefreshes;
    const sentFrom = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, index) => appInfo(index % 2 ? first : second)),
    );
    // Every call of both bridges got through on the refreshed token: the portal accepted each one once.
    expect(answers.map((answer) => answer.client_id)).toEqual(Array(12).fill(sandbox.oauthApp.clientId));
    const accepted = sandbox
      .requests(sentFrom)
      .filter((entry) => entry.method === 'app.info' && !entry.error);
    expect(accepted).toHaveLength(12);
    expect((await sandboxStats(sandbox)).tokenRefreshes - before).toBe(1);
    expect((await sandboxStats(sandbox)).refreshTokenReuse).toBe(0);
    expect(await first.storedTokens()).toEqual(await second.storedTokens());
  });

  it.each(['expired_token', 'INVALID_TOKEN'] as const)(
    'refreshes when the portal answers %s and retries the call',
    async (expiredTokenError) => {
      const sandbox = open(await SandboxPortal.start({ expiredTokenError }));
      const bridge = open(await startOAuthBridge(sandbox, workspace.dir));
      await installApp(sandbox, bridge);
      // The install binds the portal's events in the background: let it finish so only app.info meets the expiry.
      await eventually(
        async () => ((await bridge.portalHealth()).events as { boundAt: unknown }).boundAt ?? undefined,
      );
      await appInfo(bridge);
      // The portal's clock runs ahead: it says the token expired while the bridge still trusts it.
      sandbox.advanceClock(2 * 3600 * 1000);

      await appInfo(bridge);
      const refused = sandbox.requests().filter((entry) => entry.error === expiredTokenError);
      expect(refused).toHaveLength(1);
      expect(await sandboxStats(sandbox)).toMatchObject({ tokenRefreshes: 1, refreshTokenReuse: 0 });

      await postCalls(bridge, callBodies(`renewed-${expiredTokenError}`, 1)[0]);
      await untilAllFinished(sandbox, `renewed-${expiredTokenError}`, 1);
    },
  );

  it('takes over the refresh lease of a replica that died mid-refresh once the lease expires', async () => {
    const sandbox = open(await SandboxPortal.start());
    const bridge = open(await startOAuthBridge(sandbox, workspace.dir));
    await installApp(sandbox, bridge);
    const stored = (await bridge.storedTokens())!;
    // Another replica claimed the lease and died before it reached the token endpoint.
    await bridge.app
      .get(TokenStore)
      .claimRefresh(PORTAL_ID, stored.accessToken, 'dead-replica', Date.now(), 1500);
    sandbox.advanceClock(2 * 3600 * 1000);

    const startedAt = Date.now();
    await appInfo(bridge);
    // A lower bound on a product duration: the dead replica's lease (1.5 s) was honoured, not broken.
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(1000);
    expect(await sandboxStats(sandbox)).toMatchObject({ tokenRefreshes: 1, refreshTokenReuse: 0 });
  });

  it('keeps calls queued, not failed, while the token endpoint cannot be reached', async () => {
    const sandbox = open(await SandboxPortal.start());
    const unreachable = `http://127.0.0.1:${await freePort()}`;
    const bridge = open(await startOAuthBridge(sandbox, workspace.dir, { B24_OAUTH_URL: unreachable }));
    await installApp(sandbox, bridge);
    sandbox.advanceClock(2 * 3600 * 1000);

    await postCalls(bridge, callBodies('endpoint-down', 3)[0]);
    const call = await eventually(async () => {
      const view = await callState(bridge, 'endpoint-down-0');
      return view.lastError ? view : undefined;
    });
    expect(call.state).toBe('queued');
    expect(String(call.lastError)).toContain('expired');
    expect(await bridge.portalHealth()).toMatchObject({
      authorisation: 'authorised',
      failedCalls: 0,
      queueDepth: 3,
    });
    expect(sandbox.calls()).toHaveLength(0);
  });

  it('does not refresh before every call', async () => {
    const sandbox = open(await SandboxPortal.start());
    const bridge = open(await startOAuthBridge(sandbox, workspace.dir));
    await installApp(sandbox, bridge);
    for (let i = 0; i < 5; i += 1) await appInfo(bridge);
    await postCalls(bridge, callBodies('steady', 5)[0]);
    await untilAllFinished(sandbox, 'steady', 5);
    expect((await sandboxStats(sandbox)).tokenRefreshes).toBe(0);
  });

  it('calls /rest/v1/<method> with B24_API_VERSION=v1', async () => {
    const sandbox = open(await SandboxPortal.start());
    const bridge = open(await startOAuthBridge(sandbox, workspace.dir, { B24_API_VERSION: 'v1' }));
    await installApp(sandbox, bridge);
    await postCalls(bridge, callBodies('v1', 1)[0]);
    await untilAllFinished(sandbox, 'v1', 1);
    const paths = sandbox.requests().map((entry) => entry.path);
    expect(paths).toContain('/rest/v1/app.info');
    expect(paths).toContain('/rest/v1/batch');
    expect(paths.filter((path) => path.startsWith('/rest/') && !path.startsWith('/rest/v1/'))).toEqual([]);
  });

  it('pauses on a revoked application with nothing lost, and a re-install resumes it', async () => {
    const sandbox = open(await SandboxPortal.start());
    const bridge = open(await startOAuthBridge(sandbox, workspace.dir));
    await installApp(sandbox, bridge);
    await postCalls(bridge, callBodies('before-revoke', 2)[0]);
    await untilAllFinished(sandbox, 'before-revoke', 2);

    sandbox.revokeApp();
    for (const body of callBodies('revoked', 20)) await postCalls(bridge, body);
    const portal = await eventually(async () => {
      const details = await bridge.portalHealth();
      return details.paused && details.authorisation === 'needs-reauthorisation' ? details : undefined;
    });
    expect(portal).toMatchObject({ credentialsAccepted: false, failedCalls: 0, queueDepth: 20 });
    expect(String(portal.authorisationAction)).toMatch(/invalid_grant.*\/oauth\/start/);
    expect(sandbox.calls().filter((call) => call.EXTERNAL_CALL_ID?.startsWith('revoked-'))).toHaveLength(0);

    expect((await installApp(sandbox, bridge)).status).toBe(200);
    await untilAllFinished(sandbox, 'revoked', 20);
    expect(await settledPortalHealth(bridge)).toMatchObject({
      paused: false,
      authorisation: 'authorised',
      failedCalls: 0,
      queueDepth: 0,
    });
    expect((await sandboxStats(sandbox)).refreshTokenReuse).toBe(0);
  });
});
