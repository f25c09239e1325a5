import axios from 'axios';
import { SandboxPortal, SandboxTenant } from '../../sandbox';
import { DialStore } from '../../src/store/dial-store';
import { AmiServer } from '../support/ami-server';
import { ADMIN_TOKEN, eventually } from '../support/bridge-harness';
import { install, MultiBridge, pbxTokenFor, startMultiBridge, tempDir } from '../support/multi-harness';

const AMI_SECRET = 'multi-ami-s3cret';

/**
 * Portal events and click-to-call per portal (docs/API.md and §8) through HTTP and TCP only: each installed
 * portal gets its handlers bound to the bridge, a click on one portal is taken only with that portal's own
 * application token, and it rings that portal's own PBX (its dial settings); a portal without dial settings
 * keeps its click stored and dials nothing. Sandbox users: 2 = extension 101.
 */
describe('portal events and click-to-call per portal', () => {
  let sandbox: SandboxPortal;
  let bridge: MultiBridge;
  let temp: { dir: string; remove(): void };
  let alpha: SandboxTenant;
  let beta: SandboxTenant;
  let ami: AmiServer;
  const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };

  const portal = async (tenant: SandboxTenant) =>
    (await bridge.http.get(`/v1/admin/portals/${tenant.memberId}`).set(admin)).body;
  const click = async (tenant: SandboxTenant, phone: string): Promise<string> => {
    const { data } = await axios.post(`${tenant.url}/_sandbox/click`, { phone, userId: 2 });
    return (data as { CALL_ID: string }).CALL_ID;
  };
  const storedEvents = async (tenant: SandboxTenant) =>
    (await bridge.http.get(`/v1/admin/portal-events?portal=${tenant.memberId}`).set(admin)).body.events as {
      event: string;
      state: string;
      lastError: string | null;
    }[];

  beforeAll(async () => {
    ami = await AmiServer.start('crm-bridge', AMI_SECRET);
    sandbox = await SandboxPortal.start();
    alpha = sandbox.addPortal({ name: 'alpha' });
    beta = sandbox.addPortal({ name: 'beta' });
    temp = tempDir();
    bridge = await startMultiBridge(sandbox, temp.dir, { DIAL_TIMEOUT_SEC: '10' });
    expect(await install(alpha, bridge.url)).toBe(200);
    expect(await install(beta, bridge.url)).toBe(200);
  });

  afterAll(async () => {
    await bridge?.close();
    await sandbox?.close();
    await ami?.close();
    temp?.remove();
  });

  it("takes a portal's own dial settings, checked like the environment's, and never shows their secrets", async () => {
    const bad = await bridge.http
      .patch(`/v1/admin/portals/${alpha.memberId}`)
      .set(admin)
      .send({ dial: { DIAL_MODE: 'ami', AMI_URL: 'not a url', BOGUS: '1' } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('dial.BOGUS');
    const missing = await bridge.http
      .patch(`/v1/admin/portals/${alpha.memberId}`)
      .set(admin)
      .send({ dial: { DIAL_MODE: 'ami' } });
    expect(missing.status).toBe(400);
    expect(JSON.stringify(missing.body)).toContain('AMI_URL');
    const ok = await bridge.http
      .patch(`/v1/admin/portals/${alpha.memberId}`)
      .set(admin)
      .send({ dial: { DIAL_MODE: 'ami', AMI_URL: ami.url() } });
    expect(ok.status).toBe(200);
    expect(ok.body.settings.dial).toEqual({
      DIAL_MODE: 'ami',
      target: expect.stringMatching(/^tcp:\/\/127\.0\.0\.1:\d+$/),
    });
    expect(JSON.stringify(ok.body)).not.toContain(AMI_SECRET);
    expect(JSON.stringify(await portal(alpha))).not.toContain(AMI_SECRET);
  });

  it('binds each portal’s events to the bridge and rings only the clicked portal’s PBX', async () => {
    for (const tenant of [alpha, beta]) {
      await eventually(async () => {
        const body = await portal(tenant);
        return body.events?.boundEvents > 0 ? body : undefined;
      });
    }
    const alphaCall = await click(alpha, '+4930555000111');
    const originates = await eventually(async () => {
      const found = ami.originates().filter((action) => action.Variable === `CRM_CALL_ID=${alphaCall}`);
      return found.length ? found : undefined;
    });
    expect(originates).toEqual([
      expect.objectContaining({
        Channel: 'PJSIP/101',
        Exten: '+4930555000111',
        Variable: `CRM_CALL_ID=${alphaCall}`,
      }),
    ]);
    expect((await portal(alpha)).dialer).toMatchObject({ mode: 'ami', pbxReachable: true });

    // Beta has no dial settings: its click is stored and settled, and no PBX is asked.
    const before = ami.originates().length;
    await click(beta, '+4930555000222');
    const settled = await eventually(async () => {
      const events = await storedEvents(beta);
      const clicked = events.find((event) => event.event === 'ONEXTERNALCALLSTART');
      return clicked && clicked.state !== 'pending' ? clicked : undefined;
    });
    expect(settled).toMatchObject({ state: 'ignored' });
    expect(ami.originates()).toHaveLength(before);
    // Each portal's events are its own.
    expect((await storedEvents(alpha)).filter((event) => event.event === 'ONEXTERNALCALLSTART')).toHaveLength(
      1,
    );
  });

  it('dials a request another replica stored: no dialer polls, the shared look at due work wakes it', async () => {
    const dials = bridge.app.get(DialStore);
    const claims = jest.spyOn(dials, 'claim');
    try {
      // Idle: the dial-enabled portal's dialer has no loop of its own looking at the store. Bounded
      // observation (three single-mode idle looks long): an absence of polls has no event to wait on.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      expect(claims).not.toHaveBeenCalled();
      // Stored as another replica's click would be: nothing on this process is told of it.
      const portalCallId = `externalCall.${'d'.repeat(32)}.${Math.floor(Date.now() / 1000)}`;
      const clickedAt = Date.now();
      expect(
        await dials.add({
          portalId: alpha.memberId,
          portalCallId,
          kind: 'click',
          userId: 2,
          phoneNumber: '+4930555000333',
          clickedAt,
          deadline: clickedAt + 10_000,
        }),
      ).toBe(true);
      const originate = await eventually(async () =>
        ami.originates().find((action) => action.Variable === `CRM_CALL_ID=${portalCallId}`),
      );
      expect(originate).toMatchObject({ Channel: 'PJSIP/101', Exten: '+4930555000333' });
      expect(claims.mock.calls.every(([portalId]) => portalId === alpha.memberId)).toBe(true);
    } finally {
      claims.mockRestore();
    }
  });

  it("refuses an event post carrying another portal's application token", async () => {
    const betaToken = (await beta.installApp(`http://127.0.0.1:9/none`))?.posted['auth[application_token]'];
    expect(betaToken).toBeDefined();
    const forged = new URLSearchParams({
      event: 'ONEXTERNALCALLSTART',
      'data[CALL_ID]': 'externalCall.forged',
      'data[USER_ID]': '2',
      'data[PHONE_NUMBER]': '+4930555000333',
      'auth[member_id]': alpha.memberId,
      'auth[application_token]': String(betaToken),
    });
    const answer = await fetch(`${bridge.url}/v1/portal/events`, { method: 'POST', body: forged });
    expect(answer.status).toBe(401);
    expect(
      ami.originates().filter((action) => action.Variable === 'CRM_CALL_ID=externalCall.forged'),
    ).toHaveLength(0);
  });

  it('needs the portal named to list its events', async () => {
    expect((await bridge.http.get('/v1/admin/portal-events').set(admin)).status).toBe(400);
    // A PBX token is not an admin token.
    const pbx = await pbxTokenFor(bridge, alpha.memberId);
    expect(
      (
        await bridge.http
          .get(`/v1/admin/portal-events?portal=${alpha.memberId}`)
          .set('Authorization', `Bearer ${pbx}`)
      ).status,
    ).toBe(401);
  });
});
