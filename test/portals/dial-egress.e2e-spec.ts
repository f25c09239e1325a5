import axios from 'axios';
import { SandboxPortal, SandboxTenant } from '../../sandbox';
import { PortalStore } from '../../src/store/portal-store';
import { PortalRegistry } from '../../src/tenancy/portal-registry';
import { ADMIN_TOKEN, ended, eventually, started } from '../support/bridge-harness';
import { CountingServer } from '../support/counting-servers';
import { install, MultiBridge, pbxTokenFor, startMultiBridge, tempDir } from '../support/multi-harness';

const SECRET = 'egress-s3cret/with#chars';

/**
 * SPEC §8, "what a tenant supplies is hostile until checked", for click-to-call and recording downloads, in
 * multi mode with TENANT_ALLOWED_NETWORKS='' (nothing internal allowed), through HTTP only. Listeners on
 * 127.0.0.1 count every connection: a hostile destination is refused at save (400 naming the field, never
 * the password), and one stored before the rule (written to the store as an earlier version saved it) is
 * never connected to either: a click fails at once with the reason on the portal's call, a recording
 * download fails with the reason on the bridge's call. Sandbox user 2 = extension 101.
 */
describe('tenant egress: dial settings and recording downloads (multi mode)', () => {
  let sandbox: SandboxPortal;
  let bridge: MultiBridge;
  let temp: { dir: string; remove(): void };
  let alpha: SandboxTenant;
  let tcp: CountingServer;
  let web: CountingServer;
  const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
  const bridgePort = () => Number(new URL(bridge.url).port);

  const patch = (body: object) =>
    bridge.http.patch(`/v1/admin/portals/${alpha.memberId}`).set(admin).send(body);
  /** As an earlier version stored them: straight into the store, then every runtime rebuilt from it. */
  const storeAsBefore = async (settings: Parameters<PortalStore['updateSettings']>[1]) => {
    await bridge.app.get(PortalStore).updateSettings(alpha.memberId, settings, Date.now());
    await bridge.app.get(PortalRegistry).sync();
  };

  beforeAll(async () => {
    tcp = await CountingServer.tcp();
    web = await CountingServer.http();
    sandbox = await SandboxPortal.start();
    alpha = sandbox.addPortal({ name: 'alpha' });
    temp = tempDir('bridge-dial-egress-');
    bridge = await startMultiBridge(sandbox, temp.dir, {
      TENANT_ALLOWED_NETWORKS: '',
      DIAL_TIMEOUT_SEC: '20',
      RECORDING_WAIT_SEC: '5',
    });
    expect(await install(alpha, bridge.url)).toBe(200);
  });

  afterAll(async () => {
    await bridge?.close();
    await sandbox?.close();
    await tcp?.close();
    await web?.close();
    temp?.remove();
  });

  it('refuses internal, metadata, own and clear-text destinations at save, naming the field, never the secret', async () => {
    const cases: [object, RegExp][] = [
      [
        { dial: { DIAL_MODE: 'ami', AMI_URL: `tcp://crm:${SECRET}@127.0.0.1:${tcp.port}` } },
        /dial\.AMI_URL: 127\.0\.0\.1:\d+ is (in a range tenants may not reach|this deployment itself)/,
      ],
      [
        { dial: { DIAL_MODE: 'ami', AMI_URL: `tls://crm:${SECRET}@localhost:${tcp.port}` } },
        /dial\.AMI_URL: localhost:\d+ resolves to an address in a range tenants may not reach/,
      ],
      [
        { dial: { DIAL_MODE: 'esl', ESL_URL: `tcp://:${SECRET}@pbx.example.com:8021` } },
        /dial\.ESL_URL: pbx\.example\.com:8021: credentials travel only over TLS/,
      ],
      [
        { dial: { DIAL_MODE: 'http', DIAL_URL: 'http://169.254.169.254/latest/meta-data/{number}' } },
        /dial\.DIAL_URL: 169\.254\.169\.254:80 is in a range tenants may not reach/,
      ],
      [
        { dial: { DIAL_MODE: 'http', DIAL_URL: `https://127.0.0.1:${bridgePort()}/v1/admin/portals` } },
        /dial\.DIAL_URL: 127\.0\.0\.1:\d+ is (in a range tenants may not reach|this deployment itself)/,
      ],
      [
        { dial: { DIAL_MODE: 'http', DIAL_URL: `https://localhost:${web.port}/dial?n={number}` } },
        /dial\.DIAL_URL: localhost:\d+ resolves to an address in a range/,
      ],
      [
        { dial: { DIAL_MODE: 'http', DIAL_URL: 'https://{extension}.pbx.example.com/dial' } },
        /dial\.DIAL_URL: its host may not hold a \{placeholder\}/,
      ],
      [
        { dial: { DIAL_MODE: 'http', DIAL_URL: 'http://pbx.example.com/dial?n={number}' } },
        /dial\.DIAL_URL: pbx\.example\.com:80: credentials travel only over TLS/,
      ],
      [
        { recordingFetch: { hosts: ['10.0.0.5:8080'] } },
        /recordingFetch\.hosts: entry 1: 10\.0\.0\.5 is in a range/,
      ],
      [
        { recordingFetch: { hosts: ['pbx.example.com', '169.254.169.254'] } },
        /recordingFetch\.hosts: entry 2: 169\.254\.169\.254 is in a range/,
      ],
      [
        { recordingFetch: { hosts: [`localhost:${web.port}`] } },
        /recordingFetch\.hosts \(entry 1\): localhost:\d+ resolves to an address in a range/,
      ],
    ];
    for (const [body, problem] of cases) {
      const answer = await patch(body);
      expect({ body, status: answer.status }).toEqual({ body, status: 400 });
      expect(JSON.stringify(answer.body.errors)).toMatch(problem);
      expect(JSON.stringify(answer.body)).not.toContain(SECRET);
    }
    // A wildcard names no host to check at save: taken, and checked at every download.
    expect((await patch({ recordingFetch: { hosts: ['*.pbx.example.com'] } })).status).toBe(200);
    const stored = (await bridge.http.get(`/v1/admin/portals/${alpha.memberId}`).set(admin)).body;
    expect(stored.settings.dial ?? null).toBeNull();
    expect(tcp.connections).toBe(0);
    expect(web.connections).toBe(0);
  });

  it('a click on dial settings stored before the rule connects to nothing and fails the portal call at once, saying why', async () => {
    await eventually(async () => {
      const body = (await bridge.http.get(`/v1/admin/portals/${alpha.memberId}`).set(admin)).body;
      return body.events?.boundEvents > 0 ? body : undefined;
    });
    await storeAsBefore({ dial: { DIAL_MODE: 'ami', AMI_URL: `tcp://crm:${SECRET}@127.0.0.1:${tcp.port}` } });
    const view = (await bridge.http.get(`/v1/admin/portals/${alpha.memberId}`).set(admin)).body;
    expect(JSON.stringify(view.runtime.problems)).toContain('click-to-call fails every click: dial.AMI_URL');
    const { data } = await axios.post(`${alpha.url}/_sandbox/click`, { phone: '+4930555000333', userId: 2 });
    const callId = (data as { CALL_ID: string }).CALL_ID;
    const finished = await eventually(async () => {
      const call = alpha.calls().find((candidate) => candidate.CALL_ID === callId);
      return call?.finished ? call.finished : undefined;
    }, 15_000);
    expect(finished.FAILED_REASON).toMatch(
      /AMI_URL: 127\.0\.0\.1:\d+ is (in a range tenants may not reach|this deployment itself)/,
    );
    expect(finished.FAILED_REASON).not.toContain(SECRET);

    // The same for an HTTP dialer whose name resolves to loopback: refused at the lookup, no connection.
    await storeAsBefore({ dial: { DIAL_MODE: 'http', DIAL_URL: `https://localhost:${web.port}/dial` } });
    const second = (
      (await axios.post(`${alpha.url}/_sandbox/click`, { phone: '+4930555000444', userId: 2 })).data as {
        CALL_ID: string;
      }
    ).CALL_ID;
    const refused = await eventually(async () => {
      const call = alpha.calls().find((candidate) => candidate.CALL_ID === second);
      return call?.finished ? call.finished : undefined;
    }, 15_000);
    expect(refused.FAILED_REASON).toMatch(/DIAL_URL: localhost resolves to an address in a range/);
    expect(tcp.connections).toBe(0);
    expect(web.connections).toBe(0);
    await storeAsBefore({ dial: null });
  });

  it('a recording on download hosts stored before the rule is never fetched: loopback by address or by name', async () => {
    await storeAsBefore({
      recordingFetch: { hosts: [`127.0.0.1:${web.port}`, `localhost:${web.port}`] },
    });
    const token = await pbxTokenFor(bridge, alpha.memberId);
    const reasons: string[] = [];
    for (const host of ['127.0.0.1', 'localhost']) {
      const callId = `egress-rec-${host}-${Date.now()}`;
      const posted = await bridge.http
        .post('/v1/calls/events')
        .set('Authorization', `Bearer ${token}`)
        .send([started(callId), ended(callId, { recordingUrl: `http://${host}:${web.port}/r.wav` })]);
      expect(posted.status).toBe(202);
      const call = await eventually(async () => {
        const { body } = await bridge.http.get(`/v1/calls/${callId}`).set('Authorization', `Bearer ${token}`);
        return /recording/.test(body.lastError ?? '') ? body : undefined;
      }, 20_000);
      reasons.push(call.lastError);
    }
    expect(reasons[0]).toMatch(
      /recordingUrl: 127\.0\.0\.1:\d+ is (in a range tenants may not reach|this deployment itself)/,
    );
    expect(reasons[1]).toMatch(/localhost resolves to an address in a range tenants may not reach/);
    expect(web.connections).toBe(0);
  });
});
