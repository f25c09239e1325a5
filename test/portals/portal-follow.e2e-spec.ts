import { SandboxPortal, SandboxTenant } from '../../sandbox';
import { AmiDouble } from '../support/ami-double';
import { ADMIN_TOKEN, eventually } from '../support/bridge-harness';
import { install, MultiBridge, startMultiBridge, tempDir } from '../support/multi-harness';

const ALPHA_SECRET = 'alpha-ami-s3cret';
const BETA_SECRET = 'beta-ami-s3cret';
const CALLS = 6;

/**
 * Following each portal's own PBX in multi mode (docs/API.md): two installed portals, each PATCHed with a
 * follow setting naming its own AMI double (real TCP); the bridge logs in to both, and each PBX's calls reach
 * only its own portal over real HTTP. The settings are checked like the environment (a 400 names the field)
 * and their secrets are never shown back. Sandbox users: 2 = extension 101 on every tenant.
 */
describe('following each portal’s own PBX (multi mode)', () => {
  let sandbox: SandboxPortal;
  let bridge: MultiBridge;
  let temp: { dir: string; remove(): void };
  let alpha: SandboxTenant;
  let beta: SandboxTenant;
  let alphaPbx: AmiDouble;
  let betaPbx: AmiDouble;
  const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };

  const portal = async (tenant: SandboxTenant) =>
    (await bridge.http.get(`/v1/admin/portals/${tenant.memberId}`).set(admin)).body;
  const patch = (tenant: SandboxTenant, body: object) =>
    bridge.http.patch(`/v1/admin/portals/${tenant.memberId}`).set(admin).send(body);

  beforeAll(async () => {
    alphaPbx = await AmiDouble.start('crm-alpha', ALPHA_SECRET);
    betaPbx = await AmiDouble.start('crm-beta', BETA_SECRET);
    sandbox = await SandboxPortal.start();
    alpha = sandbox.addPortal({ name: 'alpha' });
    beta = sandbox.addPortal({ name: 'beta' });
    temp = tempDir();
    bridge = await startMultiBridge(sandbox, temp.dir, { DELIVERY_MAX_BACKOFF_SEC: '1' });
    expect(await install(alpha, bridge.url)).toBe(200);
    expect(await install(beta, bridge.url)).toBe(200);
  });

  afterAll(async () => {
    await bridge?.close();
    await sandbox?.close();
    await alphaPbx?.close();
    await betaPbx?.close();
    temp?.remove();
  });

  it('refuses a bad follow setting with a 400 naming the field, never repeating a secret, and changes nothing', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ PBX_EVENTS: 'ami' }, 'follow.AMI_URL'],
      [{ PBX_EVENTS: 'ami', AMI_URL: `http://crm:${ALPHA_SECRET}@pbx.example.com` }, 'follow.AMI_URL'],
      [{ PBX_EVENTS: 'sip', AMI_URL: alphaPbx.url() }, 'follow.PBX_EVENTS'],
      [{ PBX_EVENTS: 'ami', AMI_URL: alphaPbx.url(), SECRET_SAUCE: 'x' }, 'follow.SECRET_SAUCE'],
    ];
    for (const [follow, field] of cases) {
      const response = await patch(alpha, { follow });
      expect(response.status).toBe(400);
      expect(JSON.stringify(response.body)).toContain(field);
      expect(JSON.stringify(response.body)).not.toContain(ALPHA_SECRET);
    }
    const record = await portal(alpha);
    expect(record.settings.follow).toBeUndefined();
    expect(record.follow).toBeNull();
    expect(alphaPbx.logins).toBe(0);
  });

  it("follows each portal's own PBX: secrets never shown back, each PBX's calls only on its own portal", async () => {
    for (const [tenant, pbx, secret] of [
      [alpha, alphaPbx, ALPHA_SECRET],
      [beta, betaPbx, BETA_SECRET],
    ] as const) {
      const response = await patch(tenant, { follow: { PBX_EVENTS: 'ami', AMI_URL: pbx.url() } });
      expect(response.status).toBe(200);
      expect(response.body.settings.follow).toEqual({
        PBX_EVENTS: 'ami',
        target: `tcp://127.0.0.1:${pbx.port}`,
      });
      expect(JSON.stringify(response.body)).not.toContain(secret);
      const followed = await eventually(async () => {
        const body = await portal(tenant);
        return body.follow?.[0]?.connected ? body : undefined;
      }, 30_000);
      expect(followed.follow[0]).toMatchObject({
        source: 'ami',
        target: `tcp://127.0.0.1:${pbx.port}`,
        followingHere: true,
      });
      expect(JSON.stringify(followed)).not.toContain(secret);
    }
    expect(alphaPbx.logins).toBe(1);
    expect(betaPbx.logins).toBe(1);

    const playing = [
      ...Array.from({ length: CALLS }, (_, i) =>
        alphaPbx.play({
          kind: 'inbound',
          from: `+4915111100${i}`,
          to: '101',
          answeredBy: '101',
          talk: 20 + i,
        }),
      ),
      ...Array.from({ length: CALLS }, (_, i) =>
        betaPbx.play({
          kind: 'inbound',
          from: `+4915222200${i}`,
          to: '101',
          answeredBy: '101',
          talk: 40 + i,
        }),
      ),
    ];
    await Promise.all(playing.map((call) => call.done));
    for (const [tenant, prefix, talk] of [
      [alpha, '+4915111100', 20],
      [beta, '+4915222200', 40],
    ] as const) {
      const calls = await eventually(() => {
        const finished = tenant.calls().filter((call) => call.finished);
        return Promise.resolve(finished.length >= CALLS ? tenant.calls() : undefined);
      }, 60_000);
      // Exactly its own PBX's calls, each once, finished by 101 with its own talk time.
      expect(calls).toHaveLength(CALLS);
      expect(calls.every((call) => call.PHONE_NUMBER?.startsWith(prefix))).toBe(true);
      expect(new Set(calls.map((call) => call.PHONE_NUMBER)).size).toBe(CALLS);
      for (const call of calls) {
        const i = Number(call.PHONE_NUMBER?.slice(-1));
        expect(call.finished).toMatchObject({ USER_ID: 2, DURATION: talk + i, STATUS_CODE: '200' });
      }
    }

    // Removing the setting stops following that portal's PBX: its calls are no longer reported.
    expect((await patch(beta, { follow: null })).status).toBe(200);
    await eventually(async () => ((await portal(beta)).follow === null ? true : undefined));
    await betaPbx.play({ kind: 'inbound', from: '+49152222999', to: '101', answeredBy: '101', talk: 5 }).done;
    await alphaPbx.play({ kind: 'inbound', from: '+49151111999', to: '101', answeredBy: '101', talk: 5 })
      .done;
    await eventually(() =>
      Promise.resolve(
        alpha.calls().some((call) => call.PHONE_NUMBER === '+49151111999' && call.finished) || undefined,
      ),
    );
    expect(beta.calls().some((call) => call.PHONE_NUMBER === '+49152222999')).toBe(false);
  });
});
