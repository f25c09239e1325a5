import { SandboxPortal } from '../../sandbox';
import { callBodies, eventually, PBX_TOKEN } from '../support/bridge-harness';
import { sandboxStats } from '../support/sandbox-inspect';
import {
  installApp,
  OAuthBridge,
  postCalls,
  startOAuthBridge,
  tempDir,
  untilAllFinished,
} from '../auth/oauth-harness';

const lookup = (bridge: OAuthBridge, phone: string) =>
  bridge.http.get('/v1/lookup').query({ phone }).set('Authorization', `Bearer ${PBX_TOKEN}`);

describe('OAuth refresh storms', () => {
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

  it('refreshes once when the fresh token is refused too, then pauses for re-authorisation', async () => {
    expect((await installApp(sandbox, bridge)).status).toBe(200);
    // The install binds the portal's events in the background: let it finish before every token is refused.
    await eventually(
      async () => ((await bridge.portalHealth()).events as { boundAt: unknown }).boundAt ?? undefined,
    );
    // From now on the portal refuses every token of the application as invalid_token.
    sandbox.injectFault({ kind: 'http', status: 401, error: 'invalid_token', description: 'refused' });

    for (let i = 0; i < 6; i += 1) expect((await lookup(bridge, `+4930123456${i}`)).status).toBe(200);
    await postCalls(bridge, callBodies('refused', 2)[0]);
    const portal = await eventually(async () => {
      const details = (await bridge.http.get('/health/ready')).body.details.portal;
      return details.authorisation === 'needs-reauthorisation' ? details : undefined;
    });
    for (let i = 0; i < 4; i += 1) expect((await lookup(bridge, `+4930654321${i}`)).status).toBe(200);

    expect(await sandboxStats(sandbox)).toMatchObject({ tokenRefreshes: 1, refreshTokenReuse: 0 });
    expect(String(portal.authorisationAction)).toMatch(
      /refused the renewed OAuth access token.*\/oauth\/start/,
    );
    expect(portal).toMatchObject({ credentialsAccepted: false, failedCalls: 0 });
    const refusedRequests = sandbox.requests().filter((entry) => entry.error === 'invalid_token').length;
    expect(refusedRequests).toBeLessThanOrEqual(4);

    // New tokens end the pause: the queued calls go out.
    sandbox.clearFaults();
    expect((await installApp(sandbox, bridge)).status).toBe(200);
    await untilAllFinished(sandbox, 'refused', 2);
  });
});
