import { randomBytes } from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';
import { readBody, sendJson } from './http-io';
import { MethodRegistry } from './method-registry';
import { isPlainObject } from './params';
import { PortalEndpoint, sendNotFound } from './portal-endpoint';
import { PortalIdentity, PortalState, PortalStateOptions } from './portal-state';
import { SandboxSeed } from './seed';

/** Where tenant portals live: `${url}/p/<memberId>/rest/…`, `${url}/p/<memberId>/_sandbox/…`. */
export const TENANT_PREFIX = '/p/';
/** The root's control endpoint that creates and lists tenant portals. */
export const PORTALS_CONTROL_PATH = '/_sandbox/portals';

/** A tenant's own log is short by default, so a thousand tenants stay light. */
const TENANT_REQUEST_LOG_LIMIT = 2000;
/** The most tenants one POST /_sandbox/portals creates. */
const MAX_PORTALS_PER_REQUEST = 10000;

export interface TenantOptions {
  /** Default: 32 random hex digits, as real member ids look. Letters, digits, `-` and `_` only. */
  memberId?: string;
  /** Default `tenant<n>`; names the default domain. */
  name?: string;
  /** Default `<name>.sandbox.test`: only a name, nothing resolves it. */
  domain?: string;
  /** The tenant's own leaky bucket: default the root's (2/s, 50); large plans 5/s, 250. */
  rateLimitRps?: number;
  rateBurst?: number;
  /**
   * Over the root's seed. By default the tenant gets the root's employees and CRM records (its own copy),
   * the root's OAuth applications with its own application tokens, and its own webhook codes.
   */
  seed?: Partial<SandboxSeed>;
  /** Default 2000. */
  requestLogLimit?: number;
  /** Server time per command, default the root's. */
  commandMs?: number;
}

/** A tenant portal as the control API lists it. */
export interface TenantSummary {
  memberId: string;
  domain: string;
  url: string;
  restUrl: string;
}

/** One tenant portal: its own state, budget, tokens and data, served under `${root}/p/<memberId>`. */
export class SandboxTenant extends PortalEndpoint {
  readonly memberId: string;
  readonly domain: string;
  /** `${root}/p/<memberId>`, no trailing slash. */
  readonly url: string;
  /** The portal's client_endpoint, `${url}/rest/`. */
  readonly restUrl: string;
  /** The tenant's own full-rights webhook base, `${url}/rest/1/<code>/` (codes differ per tenant). */
  readonly webhookUrl: string;

  constructor(
    state: PortalState,
    identity: PortalIdentity,
    registry: MethodRegistry,
    sleep: (ms: number) => Promise<void>,
  ) {
    state.setIdentity(identity);
    super(state, registry, sleep);
    this.memberId = identity.memberId;
    this.domain = identity.domain;
    this.url = identity.url;
    this.restUrl = `${identity.url}/rest/`;
    const [hook] = state.credentials.webhookList();
    this.webhookUrl = hook ? this.controls.webhookUrl(hook) : this.restUrl;
  }

  summary(): TenantSummary {
    return { memberId: this.memberId, domain: this.domain, url: this.url, restUrl: this.restUrl };
  }
}

/** What tenants take from the root portal. */
export interface TenantParent {
  /** The root's base URL. */
  url: string;
  /** The root's state options: tenants share its seed (copied) and its token and operating settings. */
  options: PortalStateOptions;
  downloadRecordUrls: boolean;
  registry: MethodRegistry;
  sleep: (ms: number) => Promise<void>;
}

/**
 * The tenant portals of one sandbox process, for tests and benches of a bridge serving many portals. They
 * keep no timers: buckets and the operating-time ledger drain by arithmetic when a request arrives.
 */
export class TenantPortals {
  private readonly tenants = new Map<string, SandboxTenant>();
  private created = 0;

  constructor(private readonly parent: TenantParent) {}

  add(options: TenantOptions = {}): SandboxTenant {
    const memberId = options.memberId ?? randomBytes(16).toString('hex');
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(memberId)) {
      throw new RangeError('memberId must be 1 to 64 letters, digits, "-" or "_"');
    }
    if (this.tenants.has(memberId) || memberId === this.parent.options.seed.memberId) {
      throw new RangeError(`a portal with member id ${memberId} already exists`);
    }
    this.created += 1;
    const name = options.name ?? `tenant${this.created}`;
    const rootSeed = this.parent.options.seed;
    // The root's seed object is shared, not copied: a portal's state only ever reads it through a clone.
    const seed: SandboxSeed = {
      ...rootSeed,
      webhooks: rootSeed.webhooks.map((hook) => ({ ...hook, code: randomBytes(8).toString('hex') })),
      // One published application, the same client_id everywhere; each portal its own application token.
      apps: rootSeed.apps.map((app) => ({ ...app, applicationToken: randomBytes(16).toString('hex') })),
      ...options.seed,
      memberId,
    };
    const state = new PortalState({
      ...this.parent.options,
      seed,
      rateLimitRps: options.rateLimitRps ?? this.parent.options.rateLimitRps,
      rateBurst: options.rateBurst ?? this.parent.options.rateBurst,
      requestLogLimit: options.requestLogLimit ?? TENANT_REQUEST_LOG_LIMIT,
      commandMs: options.commandMs ?? this.parent.options.commandMs,
    });
    state.downloadRecordUrls = this.parent.downloadRecordUrls;
    const identity = {
      memberId,
      domain: options.domain ?? `${name}.sandbox.test`,
      url: `${this.parent.url}${TENANT_PREFIX}${memberId}`,
    };
    const tenant = new SandboxTenant(state, identity, this.parent.registry, this.parent.sleep);
    this.tenants.set(memberId, tenant);
    return tenant;
  }

  get(memberId: string): SandboxTenant | undefined {
    return this.tenants.get(memberId);
  }

  list(): SandboxTenant[] {
    return [...this.tenants.values()];
  }

  /** The tenant portal that issued a refresh token or code, for the central `/oauth/token/`. */
  issuerOf(tokenOrCode: string): PortalState | undefined {
    for (const tenant of this.tenants.values()) {
      if (tenant.state.credentials.issued(tokenOrCode)) return tenant.state;
    }
    return undefined;
  }

  /** Serves `/p/<memberId>/…` with that tenant's areas; an unknown member id gets the portal's 404. */
  serve(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const match = /^\/p\/([^/]+)(\/.*)?$/.exec(url.pathname);
    let tenant: SandboxTenant | undefined;
    try {
      tenant = match ? this.tenants.get(decodeURIComponent(match[1])) : undefined;
    } catch {
      tenant = undefined;
    }
    if (!match || !tenant) return Promise.resolve(sendNotFound(res));
    return tenant.serve(req, res, match[2] ?? '/', url);
  }

  /** `GET /_sandbox/portals` lists the tenants; `POST` creates `count` (default 1) of them. */
  async handleControl(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req, 1024 * 1024);
    if (req.method === 'GET') {
      return sendJson(
        res,
        200,
        this.list().map((tenant) => tenant.summary()),
      );
    }
    if (req.method !== 'POST') {
      return sendJson(res, 404, { error: `no control endpoint ${req.method} ${PORTALS_CONTROL_PATH}` });
    }
    let body: unknown = {};
    try {
      if (raw !== null && raw.length > 0) body = JSON.parse(raw.toString('utf8'));
    } catch {
      return sendJson(res, 400, { error: 'the body must be JSON' });
    }
    const parsed = parsePortalsRequest(body);
    if (typeof parsed === 'string') return sendJson(res, 400, { error: parsed });
    try {
      const added = Array.from({ length: parsed.count }, () => this.add(parsed.options).summary());
      return sendJson(res, 201, added);
    } catch (error) {
      if (error instanceof RangeError) return sendJson(res, 400, { error: error.message });
      throw error;
    }
  }
}

/** The body of POST /_sandbox/portals, or what is wrong with it. */
function parsePortalsRequest(body: unknown): { count: number; options: TenantOptions } | string {
  if (!isPlainObject(body)) return 'send {"count"?, "memberId"?, "name"?, "domain"?, "rateLimitRps"?, …}';
  const count = body.count ?? 1;
  if (!Number.isInteger(count) || (count as number) < 1 || (count as number) > MAX_PORTALS_PER_REQUEST) {
    return `count must be an integer from 1 to ${MAX_PORTALS_PER_REQUEST}`;
  }
  const options: TenantOptions = {};
  for (const field of ['memberId', 'name', 'domain'] as const) {
    const value = body[field];
    if (value === undefined) continue;
    if (typeof value !== 'string' || value === '') return `${field} must be a non-empty string`;
    if (count !== 1) return `${field} names one portal: send it with count 1`;
    options[field] = value;
  }
  for (const field of ['rateLimitRps', 'rateBurst', 'requestLogLimit', 'commandMs'] as const) {
    const value = body[field];
    if (value === undefined) continue;
    const positive = field !== 'commandMs';
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (positive && value === 0)) {
      return `${field} must be a ${positive ? 'positive' : 'non-negative'} number`;
    }
    options[field] = value;
  }
  return { count: count as number, options };
}
