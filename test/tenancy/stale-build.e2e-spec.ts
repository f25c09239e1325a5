import { SandboxPortal, SandboxTenant } from '../../sandbox';
import { TokenStore } from '../../src/store/token-store';
import { PortalRuntime } from '../../src/tenancy/portal-runtime';
import { AmiDouble } from '../support/ami-double';
import { ADMIN_TOKEN, ended, eventually, started } from '../support/bridge-harness';
import { install, MultiBridge, pbxTokenFor, startMultiBridge, tempDir } from '../support/multi-harness';

const AMI_SECRET = 'stale-build-ami-s3cret';

/**
 * Issue 36 finding 3 (docs/decisions/tenancy.md §5), through HTTP, the sandbox's tenant portal, the real
 * store and an AMI double over TCP: an idle portal's first work builds its runtime from the record read so
 * far; its admin's PATCH (follow this PBX) is read by a sync whose own build of the newer record is published
 * first. The older build, when its open ends, is closed and never published: the portal keeps following.
 *
 * The older build's open is made slow where it is slow in production (its read of the stored tokens, a
 * database round trip): the real store's read of this portal is held once until the PATCH is served, then
 * done as always. `PortalRuntime`'s start and close are only watched, to know when that build has ended.
 */
describe('a runtime built from a stale record never replaces a newer one', () => {
  let sandbox: SandboxPortal;
  let bridge: MultiBridge;
  let temp: { dir: string; remove(): void };
  let gamma: SandboxTenant;
  let pbx: AmiDouble;
  let pbxToken: string;
  const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };

  const view = async () => (await bridge.http.get(`/v1/admin/portals/${gamma.memberId}`).set(admin)).body;

  beforeAll(async () => {
    pbx = await AmiDouble.start('crm-gamma', AMI_SECRET);
    sandbox = await SandboxPortal.start();
    gamma = sandbox.addPortal({ name: 'gamma', memberId: 'm-stale-gamma' });
    temp = tempDir('bridge-stale-build-');
    bridge = await startMultiBridge(sandbox, temp.dir, { PORTAL_IDLE_SEC: '1' });
    expect(await install(gamma, bridge.url)).toBe(200);
    pbxToken = await pbxTokenFor(bridge, gamma.memberId);
  });

  afterAll(async () => {
    jest.restoreAllMocks();
    await bridge?.close();
    await sandbox?.close();
    await pbx?.close();
    temp?.remove();
  });

  it("publishes the PATCHed settings' runtime and closes the older build", async () => {
    // Idle: no runtime, only its record (no follow settings yet).
    await eventually(async () => ((await view()).runtime.state === 'idle' ? true : undefined), 30_000);

    const tokens = bridge.app.get(TokenStore);
    const read = tokens.findTokens.bind(tokens);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let holding!: () => void;
    const held = new Promise<void>((resolve) => (holding = resolve));
    let armed = true;
    jest.spyOn(tokens, 'findTokens').mockImplementation(async (portalId: string) => {
      if (armed && portalId === gamma.memberId) {
        armed = false;
        holding();
        await gate;
      }
      return read(portalId);
    });
    const starts = jest.spyOn(PortalRuntime.prototype, 'start');
    const closes = jest.spyOn(PortalRuntime.prototype, 'close');
    const olderBuild = (runtimes: PortalRuntime[]) =>
      runtimes.find((runtime) => runtime.portalId === gamma.memberId && !runtime.settings.follow);

    // Its first work: a call. The runtime is built from the record without follow settings; its open waits.
    const callId = `stale-${Date.now()}`;
    const posted = await bridge.http
      .post('/v1/calls/events')
      .set('Authorization', `Bearer ${pbxToken}`)
      .send([started(callId), ended(callId)]);
    expect(posted.status).toBe(202);
    await held;

    // Meanwhile the admin sets a PBX to follow: the sync's build of that record is published and follows it.
    const patched = await bridge.http
      .patch(`/v1/admin/portals/${gamma.memberId}`)
      .set(admin)
      .send({ follow: { PBX_EVENTS: 'ami', AMI_URL: pbx.url() } });
    expect(patched.status).toBe(200);
    await eventually(async () => ((await view()).follow?.[0]?.connected ? true : undefined), 30_000);
    expect(pbx.logins).toBe(1);

    // The older build's open ends now: it is either published (started) or closed.
    release();
    await eventually(() =>
      Promise.resolve(
        olderBuild([...starts.mock.contexts, ...closes.mock.contexts] as PortalRuntime[]) ? true : undefined,
      ),
    );
    expect({
      published: olderBuild(starts.mock.contexts as PortalRuntime[]) !== undefined,
      closed: olderBuild(closes.mock.contexts as PortalRuntime[]) !== undefined,
    }).toEqual({ published: false, closed: true });

    // The runtime in use is the newer record's: still following the PBX, the call delivered.
    const delivered = await eventually(async () => {
      const call = gamma.calls().find((one) => one.EXTERNAL_CALL_ID === callId);
      return call?.finished ? call : undefined;
    }, 30_000);
    expect(delivered.finished).toMatchObject({ USER_ID: 2 });
    const now = await view();
    expect(now.runtime.state).toBe('serving');
    expect(now.follow).toEqual([expect.objectContaining({ connected: true })]);
    expect(pbx.logins).toBe(1);
  });
});
