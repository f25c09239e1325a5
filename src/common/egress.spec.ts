import { LookupAddress } from 'node:dns';
import { get } from 'node:http';
import { CountingServer } from '../../test/support/counting-servers';
import { parseCredentialUrl } from './credential-url';
import { allowedNetworksOf, Destination, EgressPolicy } from './egress';

/** A resolver double: each name answers the next of its list of addresses (the last one repeats). */
function resolver(names: Record<string, string[]>) {
  const asked: Record<string, number> = {};
  return (
    hostname: string,
    _options: unknown,
    callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
  ) => {
    const list = names[hostname];
    if (!list) return callback(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }), []);
    const index = Math.min(asked[hostname] ?? 0, list.length - 1);
    asked[hostname] = (asked[hostname] ?? 0) + 1;
    const address = list[index];
    callback(null, [{ address, family: address.includes(':') ? 6 : 4 }]);
  };
}

function allowed(...cidrs: string[]) {
  const list = allowedNetworksOf(cidrs);
  if ('problem' in list) throw new Error(list.problem);
  return list;
}

function destinationOf(policy: EgressPolicy, host: string, port: number, tls = true): Destination {
  const made = policy.destination({ variable: 'AMI_URL', host, port, tls, credentials: true });
  if ('problem' in made) throw new Error(made.problem);
  return made;
}

function failure(socket: NodeJS.EventEmitter): Promise<NodeJS.ErrnoException | undefined> {
  return new Promise((resolve) => {
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error));
    socket.once('connect', () => resolve(undefined));
  });
}

describe('EgressPolicy for tenants', () => {
  let server: CountingServer;
  beforeEach(async () => (server = await CountingServer.tcp()));
  afterEach(() => server.close());
  const tenants = EgressPolicy.forTenants(allowed(), ['bridge.example.com']);

  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.20.0.1',
    '192.168.1.10',
    '100.64.0.7',
    '169.254.169.254',
    '0.0.0.0',
    '::1',
    'fe80::1',
    'fd00::5',
    '::ffff:127.0.0.1',
    '::ffff:a9fe:a9fe',
    '64:ff9b::10.0.0.1',
  ])('refuses the literal %s', (address) => {
    const made = tenants.destination({
      variable: 'ESL_URL',
      host: address,
      port: 8021,
      tls: true,
      credentials: true,
    });
    expect(made).toEqual({ problem: expect.stringContaining('ESL_URL:') });
    expect((made as { problem: string }).problem).toContain('TENANT_ALLOWED_NETWORKS');
  });

  it('takes a public address over TLS, refuses credentials in clear to it, and its own name', () => {
    expect(
      tenants.destination({
        variable: 'AMI_URL',
        host: '203.0.113.9',
        port: 5039,
        tls: true,
        credentials: true,
      }),
    ).toBeInstanceOf(Destination);
    expect(
      tenants.destination({
        variable: 'AMI_URL',
        host: '203.0.113.9',
        port: 5038,
        tls: false,
        credentials: true,
      }),
    ).toEqual({ problem: expect.stringContaining('credentials travel only over TLS') });
    expect(
      tenants.destination({
        variable: 'DIAL_URL',
        host: 'Bridge.Example.com',
        port: 443,
        tls: true,
        credentials: false,
      }),
    ).toEqual({ problem: 'DIAL_URL: bridge.example.com:443 is this deployment itself' });
  });

  it("takes this deployment's own literal address only where the operator allowed it", () => {
    const own = EgressPolicy.forTenants(allowed('127.0.0.0/8'), ['127.0.0.1']);
    expect(
      own.destination({ variable: 'AMI_URL', host: '127.0.0.1', port: 5038, tls: false, credentials: true }),
    ).toBeInstanceOf(Destination);
    expect(own.hostRefusal('127.0.0.1')).toBeUndefined();
    const public1 = EgressPolicy.forTenants(allowed(), ['203.0.113.7']);
    expect(public1.hostRefusal('203.0.113.7')).toBe('203.0.113.7 is this deployment itself');
  });

  it('takes an address the operator allowed, in clear too (a VPN)', () => {
    const vpn = EgressPolicy.forTenants(allowed('10.8.0.0/16'));
    expect(
      vpn.destination({ variable: 'AMI_URL', host: '10.8.3.4', port: 5038, tls: false, credentials: true }),
    ).toBeInstanceOf(Destination);
    expect(
      vpn.destination({ variable: 'AMI_URL', host: '10.9.0.1', port: 5039, tls: true, credentials: true }),
    ).toEqual({
      problem: expect.stringContaining('range tenants may not reach'),
    });
  });

  it('refuses a name that resolves to a refused range, at save and at connect, and never connects', async () => {
    const policy = EgressPolicy.forTenants(allowed(), [], resolver({ 'pbx.evil.test': ['127.0.0.1'] }));
    const destination = destinationOf(policy, 'pbx.evil.test', server.port);
    expect(await policy.checkNow(destination)).toContain(
      'resolves to an address in a range tenants may not reach',
    );
    const error = await failure(destination.connect());
    expect(error?.code).toBe('EGRESS_REFUSED');
    expect(server.connections).toBe(0);
  });

  it('checks the name again at every connection (DNS rebinding): a name public at save, loopback later', async () => {
    const policy = EgressPolicy.forTenants(
      allowed(),
      [],
      resolver({ 'rebind.test': ['203.0.113.9', '127.0.0.1'] }),
    );
    const destination = destinationOf(policy, 'rebind.test', server.port);
    expect(await policy.checkNow(destination)).toBeUndefined();
    const error = await failure(destination.connect());
    expect(error?.code).toBe('EGRESS_REFUSED');
    expect(server.connections).toBe(0);
  });

  it('connects to the address it checked when the operator allows it', async () => {
    const policy = EgressPolicy.forTenants(
      allowed('127.0.0.0/8'),
      [],
      resolver({ 'pbx.vpn.test': ['127.0.0.1'] }),
    );
    const socket = destinationOf(policy, 'pbx.vpn.test', server.port).connect();
    expect(await failure(socket)).toBeUndefined();
    socket.destroy();
    await server.accepted(1);
    expect(server.connections).toBe(1);
  });

  it('an HTTP agent refuses a literal or a name in a refused range (redirects included), never connecting', async () => {
    const policy = EgressPolicy.forTenants(allowed(), [], resolver({ 'files.evil.test': ['127.0.0.1'] }));
    const agent = policy.agent(false);
    for (const url of [
      `http://127.0.0.1:${server.port}/x`,
      `http://files.evil.test:${server.port}/x`,
      `http://[::ffff:127.0.0.1]:${server.port}/`,
    ]) {
      const error = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
        const request = get(url, { agent }, () => resolve(undefined));
        request.once('error', resolve);
      });
      expect(error?.code).toBe('EGRESS_REFUSED');
    }
    expect(server.connections).toBe(0);
  });

  it("unrestricted (the operator's own settings) reaches loopback", async () => {
    const socket = destinationOf(EgressPolicy.unrestricted(), '127.0.0.1', server.port, false).connect();
    expect(await failure(socket)).toBeUndefined();
    socket.destroy();
    await server.accepted(1);
    expect(server.connections).toBe(1);
  });

  it('refuses a TENANT_ALLOWED_NETWORKS entry that is not a CIDR, by position', () => {
    expect(allowedNetworksOf(['10.0.0.0/8', 'pbx.local'])).toEqual({
      problem: 'TENANT_ALLOWED_NETWORKS: entry 2 is not a CIDR such as 10.20.0.0/16 or fd00:1::/64',
    });
    expect(allowedNetworksOf(['10.0.0.0/33'])).toEqual({ problem: expect.stringContaining('entry 1') });
  });
});

describe('parseCredentialUrl', () => {
  const ami = (value: string) =>
    parseCredentialUrl(value, 'AMI_URL', ['tcp', 'tls'], 'tcp://user:password@host:5038');

  it.each([
    ['tcp://crm-bridge:Ab/cd@pbx.local:5038', 'Ab/cd'],
    ['tcp://crm-bridge:Ab#cd?e@pbx.local:5038', 'Ab#cd?e'],
    ['tcp://crm-bridge:p@ss:w0rd@pbx.local', 'p@ss:w0rd'],
    ['tcp://crm-bridge:Ab%2Fcd%23@pbx.local:5038', 'Ab/cd#'],
    ['tcp://crm-bridge:100%sure@pbx.local:5038', '100%sure'],
  ])('reads the password of %s', (value, password) => {
    expect(ami(value)).toMatchObject({ user: 'crm-bridge', password, host: 'pbx.local' });
  });

  it('reads an IPv6 host, the port, the path and the query', () => {
    expect(
      parseCredentialUrl(
        'mysql://cdr:x/y@[FD00::5]:3307/asteriskcdrdb?ssl=true',
        'ASTERISK_CDR_URL',
        ['mysql'],
        'mysql://…',
      ),
    ).toMatchObject({ host: 'fd00::5', port: 3307, path: '/asteriskcdrdb', password: 'x/y' });
  });

  it.each([
    ['http://u:p@h', 'must start with tcp:// or tls://'],
    ['tcp://u:p@', 'has no valid host'],
    ['tcp://user@pbx', 'names no password'],
    ['tcp://u:p@pbx:99999', 'has a port outside 1-65535'],
    ['tcp://u:s3cr3t with space@pbx', 'must not contain spaces'],
  ])('refuses %s naming the variable, never the value', (value, why) => {
    const parsed = ami(value);
    expect(parsed).toEqual({ problem: expect.stringContaining(why) });
    expect((parsed as { problem: string }).problem).toMatch(
      /^AMI_URL must be tcp:\/\/user:password@host:5038 \(this one /,
    );
    expect((parsed as { problem: string }).problem).not.toContain('s3cr3t');
  });
});
