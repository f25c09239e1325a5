import { createServer, Server, Socket } from 'node:net';
import { SandboxPortal, SandboxTenant } from '../../sandbox';
import { PortalOwnSettings, PortalStore } from '../../src/store/portal-store';
import { PortalRegistry } from '../../src/tenancy/portal-registry';
import { ADMIN_TOKEN, eventually } from '../support/bridge-harness';
import { install, MultiBridge, startMultiBridge, tempDir } from '../support/multi-harness';

const SECRET = 'tenant-pbx-s3cret';

/**
 * SPEC §8, "what a tenant supplies is hostile until checked", for following a portal's PBX (multi mode,
 * TENANT_ALLOWED_NETWORKS=''): an AMI_URL, ESL_URL or ASTERISK_CDR_URL naming this deployment or its
 * network (loopback, 10/8, the metadata address 169.254.169.254, [::1], a name resolving there), or sending
 * credentials in clear across the internet, is a 400 naming the variable and never the password, and
 * nothing ever connects to it: a TCP server on 127.0.0.1 counts every connection it accepts. That holds for
 * a record an older version stored before the rule too: the portal's runtime builds no follower for a
 * literal address (its health says why), and a follower of a name resolving to loopback never connects.
 */
describe('following a portal’s PBX never reaches the deployment’s own network (multi mode)', () => {
  let sandbox: SandboxPortal;
  let bridge: MultiBridge;
  let temp: { dir: string; remove(): void };
  let alpha: SandboxTenant;
  let counter: Server;
  let port: number;
  let accepted = 0;
  const sockets = new Set<Socket>();
  const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };

  const portal = async () => (await bridge.http.get(`/v1/admin/portals/${alpha.memberId}`).set(admin)).body;
  const patch = (follow: Record<string, string>) =>
    bridge.http.patch(`/v1/admin/portals/${alpha.memberId}`).set(admin).send({ follow });

  beforeAll(async () => {
    // Whatever connects here is counted: an AMI, event socket or MySQL client reaching loopback.
    counter = createServer((socket) => {
      accepted++;
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.destroy();
    });
    await new Promise<void>((resolve) => counter.listen(0, '127.0.0.1', resolve));
    port = (counter.address() as { port: number }).port;
    sandbox = await SandboxPortal.start();
    alpha = sandbox.addPortal({ name: 'alpha' });
    temp = tempDir('bridge-follow-egress-');
    bridge = await startMultiBridge(sandbox, temp.dir, {
      TENANT_ALLOWED_NETWORKS: '',
      DELIVERY_MAX_BACKOFF_SEC: '1',
    });
    expect(await install(alpha, bridge.url)).toBe(200);
  });

  afterAll(async () => {
    await bridge?.close();
    await sandbox?.close();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => counter?.close(resolve));
    temp?.remove();
  });

  const TLS_AMI = `tls://crm:${SECRET}@pbx.example.com:5039`;

  it.each([
    ['AMI_URL', { PBX_EVENTS: 'ami', AMI_URL: () => `tcp://crm:${SECRET}@127.0.0.1:${port}` }],
    ['AMI_URL', { PBX_EVENTS: 'ami', AMI_URL: () => `tls://crm:${SECRET}@127.0.0.1:${port}` }],
    ['AMI_URL', { PBX_EVENTS: 'ami', AMI_URL: () => `tls://crm:${SECRET}@10.1.2.3:5039` }],
    ['AMI_URL', { PBX_EVENTS: 'ami', AMI_URL: () => `tls://crm:${SECRET}@169.254.169.254:80` }],
    ['AMI_URL', { PBX_EVENTS: 'ami', AMI_URL: () => `tls://crm:${SECRET}@[::1]:${port}` }],
    ['AMI_URL', { PBX_EVENTS: 'ami', AMI_URL: () => `tls://crm:${SECRET}@[::ffff:127.0.0.1]:${port}` }],
    ['ESL_URL', { PBX_EVENTS: 'esl', ESL_URL: () => `tls://:${SECRET}@127.0.0.1:${port}` }],
    ['ESL_URL', { PBX_EVENTS: 'esl', ESL_URL: () => `tls://:${SECRET}@169.254.169.254:8021` }],
    ['ESL_URL', { PBX_EVENTS: 'esl', ESL_URL: () => `tls://:${SECRET}@[::1]:${port}` }],
    [
      'ASTERISK_CDR_URL',
      {
        PBX_EVENTS: 'ami',
        AMI_URL: () => TLS_AMI,
        ASTERISK_CDR_URL: () => `mysql://cdr:${SECRET}@127.0.0.1:${port}/asteriskcdrdb?ssl=true`,
      },
    ],
    [
      'ASTERISK_CDR_URL',
      {
        PBX_EVENTS: 'ami',
        AMI_URL: () => TLS_AMI,
        ASTERISK_CDR_URL: () => `mysql://cdr:${SECRET}@10.9.8.7:3306/asteriskcdrdb?ssl=true`,
      },
    ],
    // Credentials in clear across the internet: refused whatever the address.
    ['AMI_URL', { PBX_EVENTS: 'ami', AMI_URL: () => `tcp://crm:${SECRET}@203.0.113.7:5038` }],
    ['ESL_URL', { PBX_EVENTS: 'esl', ESL_URL: () => `tcp://:${SECRET}@203.0.113.7:8021` }],
    [
      'ASTERISK_CDR_URL',
      {
        PBX_EVENTS: 'ami',
        AMI_URL: () => TLS_AMI,
        ASTERISK_CDR_URL: () => `mysql://cdr:${SECRET}@203.0.113.7:3306/asteriskcdrdb`,
      },
    ],
  ] as [string, Record<string, string | (() => string)>][])(
    'PATCH %s %#: a 400 naming the variable, never the password; nothing stored, nothing connected',
    async (variable, shape) => {
      const follow = Object.fromEntries(
        Object.entries(shape).map(([name, value]) => [name, typeof value === 'function' ? value() : value]),
      );
      const response = await patch(follow);
      expect(response.status).toBe(400);
      const problems = JSON.stringify(response.body);
      expect(problems).toContain(`follow.${variable}: `);
      expect(problems).not.toContain(SECRET);
      expect((await portal()).settings.follow).toBeUndefined();
      expect(accepted).toBe(0);
    },
  );

  // Depends on the save path resolving names with EgressPolicy.checkNow (followDestinations): wired at merge.
  it('PATCH with a name that resolves to loopback (localhost): a 400 at save, nothing connected', async () => {
    const cases: Record<string, string>[] = [
      { PBX_EVENTS: 'ami', AMI_URL: `tls://crm:${SECRET}@localhost:${port}` },
      { PBX_EVENTS: 'esl', ESL_URL: `tls://:${SECRET}@localhost:${port}` },
      {
        PBX_EVENTS: 'ami',
        AMI_URL: TLS_AMI,
        ASTERISK_CDR_URL: `mysql://cdr:${SECRET}@localhost:${port}/asteriskcdrdb?ssl=true`,
      },
    ];
    for (const follow of cases) {
      const response = await patch(follow);
      const variable = Object.keys(follow).at(-1) as string;
      expect(response.status).toBe(400);
      expect(JSON.stringify(response.body)).toContain(`follow.${variable}: localhost:${port} resolves to`);
      expect(JSON.stringify(response.body)).not.toContain(SECRET);
    }
    expect((await portal()).settings.follow).toBeUndefined();
    expect(accepted).toBe(0);
  });

  /** Stores `follow` as a version before the rule would have, and has every replica rebuild the portal. */
  async function storedBeforeTheRule(follow: PortalOwnSettings['follow'] | null) {
    await bridge.app.get(PortalStore).updateSettings(alpha.memberId, { follow }, Date.now());
    await bridge.app.get(PortalRegistry).sync();
  }

  it('a record stored before the rule at a literal loopback address: no follower, the health says why', async () => {
    await storedBeforeTheRule({
      PBX_EVENTS: 'ami',
      AMI_URL: `tcp://crm:${SECRET}@127.0.0.1:${port}`,
      ASTERISK_CDR_URL: `mysql://cdr:${SECRET}@127.0.0.1:${port}/asteriskcdrdb`,
    });
    const health = await eventually(async () => {
      const body = await portal();
      return body.runtime?.problems?.length ? body : undefined;
    });
    const [problem] = health.runtime.problems as string[];
    expect(problem).toMatch(/^the PBX is not followed: /);
    // 127.0.0.1 is PUBLIC_URL's host here: the rule names that first, else the range.
    const refused = (variable: string) =>
      new RegExp(`follow\\.${variable}: 127\\.0\\.0\\.1:${port} (is this deployment itself|is in a range)`);
    expect(problem).toMatch(refused('AMI_URL'));
    expect(problem).toMatch(refused('ASTERISK_CDR_URL'));
    expect(health.follow).toBeNull();
    expect(JSON.stringify(health)).not.toContain(SECRET);
    // The portal is otherwise served.
    expect(health.runtime.state).toBe('serving');
    expect(accepted).toBe(0);
  });

  it('a record stored before the rule naming localhost: its followers try, the gate refuses, never a connection', async () => {
    await storedBeforeTheRule({
      PBX_EVENTS: 'ami',
      AMI_URL: `tls://crm:${SECRET}@localhost:${port}`,
      ASTERISK_CDR_URL: `mysql://cdr:${SECRET}@localhost:${port}/asteriskcdrdb?ssl=true`,
    });
    const health = await eventually(async () => {
      const body = await portal();
      const follow = (body.follow ?? []) as { lastError?: string | null; ledger?: { lastError?: string } }[];
      const errors = follow.map((follower) => follower.lastError ?? follower.ledger?.lastError);
      return follow.length === 2 && errors.every(Boolean) ? { body, errors } : undefined;
    }, 30_000);
    expect(health.errors).toEqual([
      `tls://localhost:${port} is not allowed: localhost resolves to an address in a range tenants may not reach`,
      expect.stringMatching(
        new RegExp(
          `^mysql://localhost:${port}/asteriskcdrdb \\(tls\\): localhost resolves to an address in a range`,
        ),
      ),
    ]);
    expect(health.body.follow[0]).toMatchObject({ source: 'ami', connected: false });
    expect(JSON.stringify(health.body)).not.toContain(SECRET);

    // The event socket alike.
    await storedBeforeTheRule({ PBX_EVENTS: 'esl', ESL_URL: `tls://:${SECRET}@localhost:${port}` });
    const esl = await eventually(async () => {
      const body = await portal();
      return body.follow?.[0]?.source === 'esl' && body.follow[0].lastError ? body.follow[0] : undefined;
    }, 30_000);
    expect(esl.lastError).toBe(
      `tls://localhost:${port} is not allowed: localhost resolves to an address in a range tenants may not reach`,
    );
    expect(accepted).toBe(0);
    await storedBeforeTheRule(null);
  });
});
