import axios from 'axios';
import { SandboxPortal, SandboxTenant } from '../../sandbox';
import { AmiDouble } from '../support/ami-double';
import { ADMIN_TOKEN, ended, eventually, started } from '../support/bridge-harness';
import { BridgeProcess, freePort, startBridgeProcess } from '../support/bridge-process';
import { install, multiEnv, tempDir } from '../support/multi-harness';

const ALPHA_SECRET = 'alpha-hostile-s3cret';
/** Issue 36: as a regular expression, 1 s per 35-character name, 25 s at 45; it grows with every zero. */
const HOSTILE = `PJSIP/${'*0'.repeat(12)}*X`;
/** Alpha's phones' channels end in this many hex digits: `PJSIP/101-` + 50 digits, 60 characters. */
const SUFFIX_DIGITS = 50;
const ALPHA_CALLS = 3;

/**
 * Issue 36 finding 2, through a real child bridge in multi mode, the sandbox's tenant portals over HTTP and
 * an AMI double over TCP: alpha's admin sets a pattern that a regular expression matches in exponential time
 * and alpha's PBX names its phones' channels so that none matches it. Alpha's calls are still told right (the
 * trunk is the customer, 101 the employee) and beta's posted call reaches beta's portal, both within the
 * spec's normal timeouts: the old regular expressions held the bridge's event loop for hours per channel.
 * Sandbox user 2 = extension 101 on every tenant.
 */
describe('a tenant’s hostile PBX_TRUNKS pattern freezes nobody', () => {
  let sandbox: SandboxPortal;
  let bridge: BridgeProcess;
  let temp: { dir: string; remove(): void };
  let alpha: SandboxTenant;
  let beta: SandboxTenant;
  let alphaPbx: AmiDouble;
  const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };

  const patch = (tenant: SandboxTenant, body: object) =>
    axios.patch(`${bridge.url}/v1/admin/portals/${tenant.memberId}`, body, {
      headers: admin,
      validateStatus: () => true,
    });
  const portal = async (tenant: SandboxTenant) =>
    (await axios.get(`${bridge.url}/v1/admin/portals/${tenant.memberId}`, { headers: admin })).data;

  beforeAll(async () => {
    alphaPbx = await AmiDouble.start('crm-alpha', ALPHA_SECRET, { channelSuffixDigits: SUFFIX_DIGITS });
    sandbox = await SandboxPortal.start();
    alpha = sandbox.addPortal({ name: 'alpha' });
    beta = sandbox.addPortal({ name: 'beta' });
    temp = tempDir('bridge-hostile-trunks-');
    const port = await freePort();
    bridge = await startBridgeProcess(
      multiEnv(sandbox, temp.dir, {
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        DELIVERY_MAX_BACKOFF_SEC: '1',
        LOG_LEVEL: 'warn',
      }),
      port,
    );
    expect(await install(alpha, bridge.url)).toBe(200);
    expect(await install(beta, bridge.url)).toBe(200);
  });

  afterAll(async () => {
    // SIGKILL: a bridge whose loop is held (the old code) would never finish a graceful stop.
    bridge?.child.kill('SIGKILL');
    await bridge?.exited;
    await sandbox?.close();
    await alphaPbx?.close();
    temp?.remove();
  });

  it('refuses more than 50 patterns, or one over 100 characters, naming PBX_TRUNKS', async () => {
    for (const trunks of [
      Array.from({ length: 51 }, (_, i) => `PJSIP/t${i}*`).join(','),
      `PJSIP/${'a'.repeat(95)}*`,
    ]) {
      const response = await patch(alpha, {
        follow: { PBX_EVENTS: 'ami', AMI_URL: alphaPbx.url(), PBX_TRUNKS: trunks },
      });
      expect(response.status).toBe(400);
      expect(JSON.stringify(response.data)).toContain('follow.PBX_TRUNKS');
      expect(JSON.stringify(response.data)).not.toContain(ALPHA_SECRET);
    }
    expect((await portal(alpha)).settings.follow).toBeUndefined();
  });

  it("tells alpha's hostile channel names right and delivers beta's call meanwhile", async () => {
    const set = await patch(alpha, {
      follow: { PBX_EVENTS: 'ami', AMI_URL: alphaPbx.url(), PBX_TRUNKS: `PJSIP/trunk*,${HOSTILE}` },
    });
    expect(set.status).toBe(200);
    await eventually(async () => ((await portal(alpha)).follow?.[0]?.connected ? true : undefined), 30_000);
    const created = await axios.post(
      `${bridge.url}/v1/admin/portals/${beta.memberId}/pbx-tokens`,
      { label: 'beta PBX' },
      { headers: admin },
    );
    const betaToken = (created.data as { token: string }).token;

    // Alpha's phone channels (`PJSIP/101-000…0012`, 60 characters) match neither pattern: phones.
    const playing = Array.from({ length: ALPHA_CALLS }, (_, i) =>
      alphaPbx.play({ kind: 'inbound', from: `+4915111177${i}`, to: '101', answeredBy: '101', talk: 30 + i }),
    );
    const betaCall = `beta-${Date.now()}`;
    const posted = await axios.post(
      `${bridge.url}/v1/calls/events`,
      [started(betaCall, { phoneNumber: '+4930555000' }), ended(betaCall)],
      { headers: { Authorization: `Bearer ${betaToken}` } },
    );
    expect(posted.status).toBe(202);
    const betaDelivered = await eventually(async () => {
      const call = beta.calls().find((one) => one.EXTERNAL_CALL_ID === betaCall);
      return call?.finished ? call : undefined;
    }, 30_000);
    expect(betaDelivered).toMatchObject({ PHONE_NUMBER: '+4930555000', finished: { USER_ID: 2 } });

    await Promise.all(playing.map((call) => call.done));
    const calls = await eventually(async () => {
      const finished = alpha.calls().filter((call) => call.finished);
      return finished.length >= ALPHA_CALLS ? alpha.calls() : undefined;
    }, 30_000);
    // The trunk is the customer and 101 the employee: inbound, each once, with its own talk time.
    expect(calls).toHaveLength(ALPHA_CALLS);
    for (const call of calls) {
      expect(call.PHONE_NUMBER).toMatch(/^\+4915111177\d$/);
      expect(call.TYPE).toBe(2);
      const i = Number(call.PHONE_NUMBER?.slice(-1));
      expect(call.finished).toMatchObject({ USER_ID: 2, DURATION: 30 + i, STATUS_CODE: '200' });
    }
    expect(beta.calls().every((call) => call.EXTERNAL_CALL_ID === betaCall)).toBe(true);
  });
});
