import axios from 'axios';
import request from 'supertest';
import { SandboxPortal } from '../../sandbox';
import { installApp, OAuthBridge, postCalls, startOAuthBridge, tempDir } from '../auth/oauth-harness';
import { callBodies, eventually } from '../support/bridge-harness';

interface Binding {
  event: string;
  handler: string;
  eventType: string;
}

async function bindings(sandbox: SandboxPortal): Promise<Binding[]> {
  return ((await request(sandbox.url).get('/_sandbox/events').expect(200)).body as { bindings: Binding[] })
    .bindings;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * docs/API.md (issue 26, finding 3), one portal in OAuth mode on a real store: the bridge binds
 * ONAPPUNINSTALL at install; the portal's uninstall posts it to /v1/portal/events, and from that answer
 * on nothing more is sent to the portal while the PBX's calls are still taken.
 */
describe('uninstall heard on /v1/portal/events (OAuth mode)', () => {
  let sandbox: SandboxPortal;
  let temp: ReturnType<typeof tempDir>;
  let bridge: OAuthBridge;

  beforeEach(async () => {
    sandbox = await SandboxPortal.start();
    temp = tempDir();
    bridge = await startOAuthBridge(sandbox, temp.dir);
  });
  afterEach(async () => {
    await bridge.close();
    await sandbox.close();
    temp.remove();
  });

  it('binds ONAPPUNINSTALL with the other events; the uninstall pauses delivery at once; a forged one is 401', async () => {
    expect((await installApp(sandbox, bridge)).status).toBe(200);
    const handler = `${bridge.url}/v1/portal/events`;
    const bound = await eventually(async () => {
      const list = await bindings(sandbox);
      return list.length === 12 ? list : undefined;
    }, 15000);
    expect(bound).toContainEqual(
      expect.objectContaining({ event: 'ONAPPUNINSTALL', handler, eventType: 'online' }),
    );

    // Delivery runs: a first call reaches the portal.
    await postCalls(bridge, callBodies('before', 1)[0]);
    await eventually(async () =>
      sandbox.calls().some((call) => call.EXTERNAL_CALL_ID === 'before-0' && call.finished)
        ? true
        : undefined,
    );

    // A post with another token is refused and pauses nothing.
    await bridge.http
      .post('/v1/portal/events')
      .type('form')
      .send('event=ONAPPUNINSTALL&auth[application_token]=forged')
      .expect(401);
    expect((await bridge.storedTokens())?.reauthorisationReason).toBeUndefined();

    // The administrator removes the application: the sandbox posts ONAPPUNINSTALL to the bound handler.
    const { data: removed } = await axios.post(
      `${sandbox.url}/_sandbox/apps/${encodeURIComponent(sandbox.oauthApp.clientId)}/uninstall`,
      {},
    );
    expect(removed.handlers).toEqual([handler]);
    expect(removed.status).toBe(200);
    expect(JSON.parse(removed.responseBody)).toMatchObject({ event: 'ONAPPUNINSTALL', paused: true });
    const since = Date.now();
    expect((await bridge.storedTokens())?.reauthorisationReason).toContain('ONAPPUNINSTALL');
    expect(await bridge.portalHealth()).toMatchObject({
      authorisation: 'needs-reauthorisation',
    });

    // Calls keep being taken (stored, 202), and not one request reaches the portal.
    for (const body of callBodies('after', 20)) await postCalls(bridge, body as unknown[]);
    // Bounded observation: nothing marks "delivery had its chance"; a pause it ignored shows here.
    await sleep(3000);
    expect(sandbox.requests(since)).toEqual([]);
  });
});
