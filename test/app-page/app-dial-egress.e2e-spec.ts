import { createServer, Server, Socket } from 'node:net';
import request from 'supertest';
import { SandboxPortal, SandboxTenant } from '../../sandbox';
import { AmiServer } from '../support/ami-server';
import { ADMIN_TOKEN } from '../support/bridge-harness';
import { freePort } from '../support/bridge-process';
import { CountingServer } from '../support/counting-servers';
import { install, MultiBridge, startMultiBridge, tempDir } from '../support/multi-harness';

const SECRET = 'page-dial-s3cret/#?';
const WRONG = 'not-the-page-s3cret';

/** The page as the browser posts it: the portal's form post opens a session, carried in every form's body. */
async function openSession(http: ReturnType<typeof request>, tenant: SandboxTenant): Promise<string> {
  const authId = tenant.issueTokens(undefined, 1)?.access_token ?? '';
  const entry = await http
    .post('/app?DOMAIN=x&LANG=en')
    .type('form')
    .send({ AUTH_ID: authId, REFRESH_ID: 'r', member_id: tenant.memberId, PLACEMENT: 'DEFAULT' });
  expect(entry.status).toBe(200);
  const session = /name="session" value="([^"]+)"/.exec(entry.text)?.[1] ?? '';
  expect(session).not.toBe('');
  return session;
}

/** The text of the page's `#test-result`, as the dial form's "Test connection" answers. */
const testResult = (html: string) =>
  /<p [^>]*id="test-result">([^<]*)<\/p>/.exec(html)?.[1]?.replace(/&#39;/g, "'") ?? '';

/**
 * The application page's dial settings (SPEC §8) in multi mode, driven over HTTP as the browser posts the
 * page's real form (app-page.e2e-spec.ts clicks the same form in Chromium; app-audit.e2e-spec.ts posts it
 * likewise). With TENANT_ALLOWED_NETWORKS='': saving or testing an internal destination is refused and
 * nothing is connected to (listeners on 127.0.0.1 count). With loopback allowed (the operator's network):
 * "Test connection" answers alike for a port speaking another protocol, a closed port and a silent one;
 * `login refused` only when the AMI double spoke AMI and refused the secret; never the server's own words.
 */
describe('the application page: dial settings under the tenant rule (multi mode, HTTP)', () => {
  let sandbox: SandboxPortal;
  let alpha: SandboxTenant;

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    alpha = sandbox.addPortal({ name: 'alpha' });
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  describe("TENANT_ALLOWED_NETWORKS=''", () => {
    let bridge: MultiBridge;
    let temp: { dir: string; remove(): void };
    let tcp: CountingServer;
    let session: string;

    beforeAll(async () => {
      tcp = await CountingServer.tcp();
      temp = tempDir('bridge-app-dial-egress-');
      bridge = await startMultiBridge(sandbox, temp.dir, { TENANT_ALLOWED_NETWORKS: '' });
      expect(await install(alpha, bridge.url)).toBe(200);
      session = await openSession(bridge.http, alpha);
    });
    afterAll(async () => {
      await bridge?.close();
      await tcp?.close();
      temp?.remove();
    });

    it('refuses to save an internal, metadata or loopback-named destination, beside the field; stores nothing', async () => {
      for (const [fields, problem] of [
        [
          { DIAL_MODE: 'ami', AMI_URL: `tcp://crm:${SECRET}@127.0.0.1:${tcp.port}` },
          'dial.AMI_URL: 127.0.0.1',
        ],
        [
          { DIAL_MODE: 'ami', AMI_URL: `tls://crm:${SECRET}@localhost:${tcp.port}` },
          'resolves to an address',
        ],
        [
          { DIAL_MODE: 'http', DIAL_URL: 'http://169.254.169.254/latest/{number}' },
          '169.254.169.254:80 is in',
        ],
      ] as const) {
        const saved = await bridge.http
          .post('/app/settings')
          .type('form')
          .send({ session, defaultUserId: '', defaultCountry: '', missedCallTask: '', ...fields });
        expect(saved.status).toBe(400);
        expect(saved.text).toContain(problem);
        expect(saved.text).not.toContain(SECRET);
      }
      const stored = await bridge.http
        .get(`/v1/admin/portals/${alpha.memberId}`)
        .set('Authorization', `Bearer ${ADMIN_TOKEN}`);
      expect(stored.body.settings.dial ?? null).toBeNull();
      expect(tcp.connections).toBe(0);
    });

    it('"Test connection" of such a destination answers "not allowed" and connects to nothing', async () => {
      for (const url of [
        `tcp://crm:${SECRET}@127.0.0.1:${tcp.port}`,
        `tls://crm:${SECRET}@localhost:${tcp.port}`,
      ]) {
        const tested = await bridge.http.post('/app/test-dial').type('form').send({
          session,
          defaultUserId: '',
          defaultCountry: '',
          missedCallTask: '',
          DIAL_MODE: 'ami',
          AMI_URL: url,
        });
        expect(testResult(tested.text)).toContain('not allowed');
        expect(tested.text).not.toContain(SECRET);
      }
      expect(tcp.connections).toBe(0);
    });
  });

  describe('loopback allowed (the operator network of the doubles)', () => {
    let bridge: MultiBridge;
    let temp: { dir: string; remove(): void };
    let session: string;
    let ami: AmiServer;
    let other: Server;
    let silent: CountingServer;
    const sockets = new Set<Socket>();

    beforeAll(async () => {
      ami = await AmiServer.start('crm', SECRET);
      silent = await CountingServer.tcp();
      // Speaks another protocol at once (an SSH server's banner) and closes nothing.
      other = createServer((socket) => {
        sockets.add(socket);
        socket.on('error', () => undefined);
        socket.write('SSH-2.0-OpenSSH_9.6 Authentication failed\r\n');
      });
      await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
      temp = tempDir('bridge-app-dial-test-');
      bridge = await startMultiBridge(sandbox, temp.dir);
      expect(await install(alpha, bridge.url)).toBe(200);
      session = await openSession(bridge.http, alpha);
    });
    afterAll(async () => {
      await bridge?.close();
      await ami?.close();
      await silent?.close();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => other?.close(resolve));
      temp?.remove();
    });

    const test = async (url: string) =>
      testResult(
        (
          await bridge.http.post('/app/test-dial').type('form').send({
            session,
            defaultUserId: '',
            defaultCountry: '',
            missedCallTask: '',
            DIAL_MODE: 'ami',
            AMI_URL: url,
          })
        ).text,
      );

    it('answers alike for another protocol, a closed port and a silent port: no port scanning through it', async () => {
      const closed = await freePort();
      const ports = [(other.address() as { port: number }).port, closed, silent.port];
      const answers = [];
      for (const port of ports) answers.push(await test(`tcp://crm:${SECRET}@127.0.0.1:${port}`));
      const alike = answers.map((answer, index) => answer.replace(`:${ports[index]}`, ':<port>'));
      expect(alike[0]).toMatch(/unreachable: no Asterisk Manager Interface answered at 127\.0\.0\.1:<port>/);
      expect(alike[1]).toBe(alike[0]);
      expect(alike[2]).toBe(alike[0]);
      expect(answers.join(' ')).not.toMatch(/SSH|OpenSSH|ECONNREFUSED|Authentication failed/);
    });

    it('says "login refused" only when the AMI double refused the secret, without its words; ok with the right one', async () => {
      const refused = await test(`tcp://crm:${WRONG}@127.0.0.1:${ami.port}`);
      expect(refused).toContain('login refused');
      expect(refused).not.toContain('Authentication failed');
      expect(refused).not.toContain(WRONG);
      expect(ami.actions.map((action) => action.Action)).toEqual(['Login']);
      expect(await test(`tcp://crm:${encodeURIComponent(SECRET)}@127.0.0.1:${ami.port}`)).toContain(
        'accepted the login',
      );
    });
  });
});
