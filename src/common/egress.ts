import { lookup as dnsLookup, LookupAddress, LookupAllOptions } from 'node:dns';
import { Agent as HttpAgent, AgentOptions } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { BlockList, connect as netConnect, isIP, LookupFunction, Socket, TcpNetConnectOpts } from 'node:net';
import { connect as tlsConnect, TLSSocket } from 'node:tls';
import { hostPort } from './credential-url';

/*
 * The egress gate (SPEC §8, "what a tenant supplies is hostile until checked"): every connection the bridge
 * makes for a portal's own settings (AMI, the event socket, the CDR database, the HTTP dialer, recording
 * downloads) goes through a Destination, which only an EgressPolicy makes. A connector takes a Destination,
 * never a URL, so it cannot forget the rule. The policy checks a destination when it is made (literal
 * addresses, TLS for credentials), a caller may check its name when the setting is saved (`checkNow`), and
 * every connection resolves the name again and connects to the very address it checked (a custom `lookup`:
 * no DNS rebinding between the check and the connect).
 */

/** Where tenants may not go unless the operator allows it: this deployment, its network, what is not routable. */
const INTERNAL_V4: [string, number][] = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // shared (carrier-grade NAT; VPN peers)
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local: cloud metadata services
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address
];
const INTERNAL_V6: [string, number][] = [
  ['::', 128],
  ['::1', 128],
  ['fe80::', 10],
  ['fc00::', 7],
  ['ff00::', 8],
];

const INTERNAL = new BlockList();
for (const [net, prefix] of INTERNAL_V4) INTERNAL.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of INTERNAL_V6) INTERNAL.addSubnet(net, prefix, 'ipv6');

/** A connection refused by the gate: the message names the host and the rule, never a credential. */
export class EgressRefused extends Error {
  readonly code = 'EGRESS_REFUSED';
}

/** A connector's failure after the server spoke its protocol and refused the credentials. */
export interface CredentialsRefused {
  credentialsRefused: true;
}

/**
 * A connector's failure (AMI, the event socket): its message names the address and never a credential;
 * `code` is the socket's (`ECONNREFUSED`, `EGRESS_REFUSED` when this gate refused the address), and
 * `credentialsRefused` says the server spoke its protocol and refused the login.
 */
export class ConnectorError extends Error {
  readonly code?: string;
  readonly credentialsRefused?: true;

  constructor(message: string, details: { code?: string; credentialsRefused?: true } = {}) {
    super(message);
    if (details.code) this.code = details.code;
    if (details.credentialsRefused) this.credentialsRefused = true;
  }
}

export function isCredentialsRefused(error: unknown): error is CredentialsRefused {
  return typeof error === 'object' && error !== null && (error as CredentialsRefused).credentialsRefused;
}

/** What a destination is for: the protocol decides the rule's wording only. */
export interface DestinationSpec {
  /** The setting it comes from (`AMI_URL`, `DIAL_URL`, …): named in every refusal. */
  variable: string;
  host: string;
  port: number;
  /** The connection is TLS from its first byte, or upgraded to TLS before credentials (MySQL's `?ssl=true`). */
  tls: boolean;
  /** Credentials cross this connection: a tenant's then need TLS. */
  credentials: boolean;
}

type Lookup = (
  hostname: string,
  options: LookupAllOptions,
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

const systemLookup: Lookup = (hostname, options, callback) => dnsLookup(hostname, options, callback);

/** The CIDR list of TENANT_ALLOWED_NETWORKS, checked: a problem names the entry's position, not a value. */
export function allowedNetworksOf(cidrs: readonly string[]): BlockList | { problem: string } {
  const list = new BlockList();
  for (const [index, cidr] of cidrs.entries()) {
    const [net, bits, extra] = cidr.split('/');
    const family = isIP(net ?? '');
    const prefix = Number(bits);
    const max = family === 6 ? 128 : 32;
    if (!family || extra !== undefined || !/^\d{1,3}$/.test(bits ?? '') || prefix > max) {
      return {
        problem: `TENANT_ALLOWED_NETWORKS: entry ${index + 1} is not a CIDR such as 10.20.0.0/16 or fd00:1::/64`,
      };
    }
    list.addSubnet(net, prefix, family === 6 ? 'ipv6' : 'ipv4');
  }
  return list;
}

/** The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d) or NAT64 (64:ff9b::a.b.c.d) IPv6 address. */
function embeddedV4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (!hex) return undefined;
  const high = parseInt(hex[1], 16);
  const low = parseInt(hex[2], 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/**
 * Who may be reached. `unrestricted`: the operator's own settings (single mode: the deployment is the
 * customer's). `forTenants`: a portal's settings in multi mode, under SPEC §8's rule.
 */
export class EgressPolicy {
  private constructor(
    readonly restricted: boolean,
    private readonly allowed: BlockList,
    private readonly ownHosts: readonly string[],
    private readonly resolve: Lookup,
  ) {}

  static unrestricted(): EgressPolicy {
    return new EgressPolicy(false, new BlockList(), [], systemLookup);
  }

  /**
   * `allowed`: TENANT_ALLOWED_NETWORKS; `ownHosts`: this deployment's own names (PUBLIC_URL's host), never a
   * tenant's destination; `resolve`: the resolver (the system's; specs give their own).
   */
  static forTenants(
    allowed: BlockList,
    ownHosts: readonly string[] = [],
    resolve: Lookup = systemLookup,
  ): EgressPolicy {
    return new EgressPolicy(
      true,
      allowed,
      ownHosts.map((host) => host.toLowerCase()),
      resolve,
    );
  }

  /** Why `address` (an IP literal) may not be reached, or undefined. */
  refusal(address: string): string | undefined {
    if (!this.restricted) return undefined;
    const family = isIP(address);
    if (family === 0) return 'is not an address';
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (this.allowed.check(address, type)) return undefined;
    const inner = family === 6 ? embeddedV4(address) : undefined;
    if (inner !== undefined) {
      if (this.allowed.check(inner, 'ipv4')) return undefined;
      if (INTERNAL.check(inner, 'ipv4')) return 'is in a range tenants may not reach';
    }
    return INTERNAL.check(address, type) ? 'is in a range tenants may not reach' : undefined;
  }

  /**
   * A destination, or why it is refused now: a literal address in a refused range, this deployment's own
   * name, or credentials in clear (a tenant's credentials travel only over TLS, except to an address the
   * operator allowed, such as a VPN's).
   */
  destination(spec: DestinationSpec): Destination | { problem: string } {
    const host = spec.host.replace(/^\[|\]$/g, '').toLowerCase();
    const where = `${spec.variable}: ${hostPort(host, spec.port)}`;
    if (!this.restricted) return new Destination(spec.variable, host, spec.port, this);
    const literal = isIP(host) !== 0;
    // A literal own address the operator allowed (TENANT_ALLOWED_NETWORKS) is taken like any allowed one.
    if (this.ownHosts.includes(host) && !(literal && this.allowedExplicitly(host))) {
      return { problem: `${where} is this deployment itself` };
    }
    const refusal = literal ? this.refusal(host) : undefined;
    if (refusal) {
      return {
        problem: `${where} ${refusal} (loopback, link-local, private and shared ranges are refused unless TENANT_ALLOWED_NETWORKS allows them)`,
      };
    }
    if (spec.credentials && !spec.tls && !(literal && this.allowedExplicitly(host))) {
      return {
        problem: `${where}: credentials travel only over TLS (tls://, mysql ?ssl=true, https://), or in clear to an address of TENANT_ALLOWED_NETWORKS`,
      };
    }
    return new Destination(spec.variable, host, spec.port, this);
  }

  /** Resolves a destination's name now (the check at save): why it is refused, or undefined. */
  async checkNow(destination: Destination): Promise<string | undefined> {
    if (!this.restricted || isIP(destination.host) !== 0) return undefined;
    const addresses = await new Promise<LookupAddress[]>((done) =>
      this.resolve(destination.host, { all: true }, (error, found) => done(error ? [] : found)),
    );
    // A name that does not resolve (yet) is no way in: every connection checks it again.
    const refused = addresses.find(({ address }) => this.refusal(address));
    return refused
      ? `${destination.variable}: ${destination.label} resolves to an address in a range tenants may not reach (loopback, link-local, private and shared ranges are refused unless TENANT_ALLOWED_NETWORKS allows them)`
      : undefined;
  }

  /** A `lookup` for net/tls: resolves, and fails when any address the name has is refused. */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    const family =
      options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : Number(options.family ?? 0);
    this.resolve(hostname, { all: true, family }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const refused = addresses.find(({ address }) => this.refusal(address));
      if (refused || addresses.length === 0) {
        return callback(
          new EgressRefused(`${hostname} resolves to an address in a range tenants may not reach`),
          '',
          0,
        );
      }
      if (options.all) {
        return (callback as unknown as (e: null, all: LookupAddress[]) => void)(null, addresses);
      }
      callback(null, addresses[0].address, addresses[0].family);
    });
  };

  /**
   * An HTTP(S) agent whose every connection (each redirect's too) goes through this policy: a name is
   * resolved and checked by `lookup`, a literal address checked before any socket is made.
   */
  agent(tls: boolean, options: AgentOptions = {}): HttpAgent {
    return gatedAgent(tls ? HttpsAgent : HttpAgent, this, options);
  }

  /** Why a request to this host (name or literal) is refused before its socket exists, or undefined. */
  hostRefusal(host: string): string | undefined {
    const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
    if (!this.restricted) return undefined;
    const literal = isIP(bare) !== 0;
    if (this.ownHosts.includes(bare) && !(literal && this.allowedExplicitly(bare))) {
      return `${bare} is this deployment itself`;
    }
    const refusal = literal ? this.refusal(bare) : undefined;
    return refusal && `${bare} ${refusal}`;
  }

  private allowedExplicitly(address: string): boolean {
    return this.allowed.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
  }
}

/**
 * A checked place to connect to: made only by EgressPolicy.destination, so every connector's socket comes
 * from here. A literal address was checked when it was made; a name is resolved and checked at every
 * connection, and the socket goes to the address that passed.
 */
export class Destination {
  /** @internal EgressPolicy.destination makes these. */
  constructor(
    readonly variable: string,
    readonly host: string,
    readonly port: number,
    private readonly policy: EgressPolicy,
  ) {}

  /** `host:port`, no credentials: for logs, health and answers. */
  get label(): string {
    return hostPort(this.host, this.port);
  }

  /** A TCP connection (a refused one errors on the next tick with EgressRefused). */
  connect(options: Omit<TcpNetConnectOpts, 'host' | 'port' | 'lookup'> = {}): Socket {
    return netConnect({ ...options, host: this.host, port: this.port, lookup: this.policy.lookup });
  }

  /** A TLS connection whose certificate is checked against the name (SNI too). */
  connectTls(options: { rejectUnauthorized?: boolean; timeout?: number } = {}): TLSSocket {
    return tlsConnect({
      host: this.host,
      port: this.port,
      servername: isIP(this.host) === 0 ? this.host : undefined,
      rejectUnauthorized: options.rejectUnauthorized ?? true,
      lookup: this.policy.lookup,
      timeout: options.timeout,
    });
  }
}

type CreateConnection = (
  options: { host?: string | null },
  callback: (error: Error | null, socket?: Socket) => void,
) => Socket | undefined;

function gatedConnection(policy: EgressPolicy, create: CreateConnection): CreateConnection {
  return (options, callback) => {
    const refusal = policy.hostRefusal(options.host ?? '');
    if (refusal) {
      callback(new EgressRefused(refusal));
      return undefined;
    }
    return create(options, callback);
  };
}

/** An agent whose every connection passes the policy first (its host checked, its lookup the policy's). */
function gatedAgent<A extends HttpAgent>(
  Agent: new (options: AgentOptions) => A,
  policy: EgressPolicy,
  options: AgentOptions,
): A {
  const agent = new Agent({ ...options, lookup: policy.lookup } as AgentOptions);
  const self = agent as unknown as { createConnection: CreateConnection };
  self.createConnection = gatedConnection(policy, self.createConnection.bind(agent));
  return agent;
}
