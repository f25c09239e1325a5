import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo, Socket } from 'node:net';
import { sendJson } from './http-io';
import { MethodRegistry } from './method-registry';
import { portalMethods } from './methods';
import { PortalEndpoint } from './portal-endpoint';
import { PortalState, PortalStateOptions } from './portal-state';
import { defaultSeed, SandboxSeed } from './seed';
import { OperatingCharge } from './operating-time';
import {
  PORTALS_CONTROL_PATH,
  SandboxTenant,
  TENANT_PREFIX,
  TenantOptions,
  TenantPortals,
} from './tenant-portals';

export interface SandboxOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Leaky-bucket drain per second, default 2. */
  rateLimitRps?: number;
  /** Bucket size, default 50. */
  rateBurst?: number;
  /** OAuth access-token lifetime, default 3600. */
  accessTokenTtlSec?: number;
  /** The error code of an expired token: real portals say `expired_token`, the seed spec `INVALID_TOKEN`. */
  expiredTokenError?: 'expired_token' | 'INVALID_TOKEN';
  /** Employees, contacts, companies, leads, deals, webhooks, apps; the rest from `defaultSeed()`. */
  seed?: Partial<SandboxSeed>;
  /** Keep at most this many request-log entries, default 20000. */
  requestLogLimit?: number;
  /**
   * Server time each command takes, ms (default 0): a batch of n commands is answered n × commandMs after
   * it arrived (requests run side by side, like a portal's workers) and charged to each command's method.
   */
  commandMs?: number;
  /** The operating-time limit's sliding window, default 600 s. */
  operatingWindowSec?: number;
  /** Server seconds a method may use within the window before it is blocked, default 480. */
  operatingLimitSec?: number;
  /** How server time is charged: `run` (default, as portals do), `batch-whole`, or the `batch-upfront` faults. */
  operatingCharge?: OperatingCharge;
  /** attachRecord tries RECORD_URL once while answering and fails when it cannot download it (default off). */
  downloadRecordUrls?: boolean;
  /** Tenant portals to start with (default 0), each with `addPortal()`'s defaults. */
  portals?: number;
}

/**
 * A running sandbox portal: the portal's REST API, its OAuth server and the test control API over HTTP, at
 * the server root. The same process serves tenant portals (`addPortal`) under `/p/<memberId>/`, and the
 * root's `/oauth/token/` is their central OAuth server, as the vendor's oauth.bitrix.info is for portals.
 */
export class SandboxPortal extends PortalEndpoint {
  /** Base URL without trailing slash, e.g. http://127.0.0.1:45123. */
  readonly url: string;
  /** The default full-rights webhook base, `${url}/rest/1/<code>/`. */
  readonly webhookUrl: string;
  private readonly sockets = new Set<Socket>();
  private readonly timers: Set<NodeJS.Timeout>;

  private constructor(
    private readonly server: Server,
    state: PortalState,
    url: string,
    private readonly tenants: TenantPortals,
    parts: { registry: MethodRegistry; sleep: (ms: number) => Promise<void>; timers: Set<NodeJS.Timeout> },
  ) {
    super(state, parts.registry, parts.sleep, (token) => tenants.issuerOf(token));
    this.timers = parts.timers;
    this.url = url;
    const [hook] = state.credentials.webhookList();
    this.webhookUrl = hook ? this.controls.webhookUrl(hook) : `${this.url}/rest/`;

    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      this.dispatch(req, res).catch((error: unknown) => {
        console.error('sandbox portal: request failed', error);
        if (!res.headersSent) {
          sendJson(res, 500, { error: 'INTERNAL_SERVER_ERROR', error_description: 'Internal server error' });
        } else res.destroy();
      });
    });
  }

  static async start(options: SandboxOptions = {}): Promise<SandboxPortal> {
    const stateOptions: PortalStateOptions = {
      seed: { ...defaultSeed(), ...options.seed },
      rateLimitRps: options.rateLimitRps ?? 2,
      rateBurst: options.rateBurst ?? 50,
      accessTokenTtlSec: options.accessTokenTtlSec ?? 3600,
      expiredTokenError: options.expiredTokenError ?? 'expired_token',
      requestLogLimit: options.requestLogLimit ?? 20000,
      commandMs: options.commandMs ?? 0,
      operatingWindowSec: options.operatingWindowSec ?? 600,
      operatingLimitSec: options.operatingLimitSec ?? 480,
      operatingCharge: options.operatingCharge ?? 'run',
    };
    const state = new PortalState(stateOptions);
    const server = createServer({ keepAliveTimeout: 5000 });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    const { port, address } = server.address() as AddressInfo;
    const url = `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
    state.setAddress(url);
    state.downloadRecordUrls = options.downloadRecordUrls ?? false;
    // One method registry and one timer set for the root and every tenant: a tenant costs only its state.
    const registry = portalMethods();
    const timers = new Set<NodeJS.Timeout>();
    const sleep = (ms: number) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          timers.delete(timer);
          resolve();
        }, ms);
        timers.add(timer);
      });
    const tenants = new TenantPortals({
      url,
      options: stateOptions,
      downloadRecordUrls: state.downloadRecordUrls,
      registry,
      sleep,
    });
    const portal = new SandboxPortal(server, state, url, tenants, { registry, sleep, timers });
    for (let index = 0; index < (options.portals ?? 0); index += 1) tenants.add();
    return portal;
  }

  /**
   * Starts a tenant portal in this process: its own member id, domain, data, tokens, budget and logs,
   * served under `${url}/p/<memberId>/`. It accepts the root's OAuth application (same client id and
   * secret) with its own application token.
   */
  addPortal(options?: TenantOptions): SandboxTenant {
    return this.tenants.add(options);
  }

  portal(memberId: string): SandboxTenant | undefined {
    return this.tenants.get(memberId);
  }

  portals(): SandboxTenant[] {
    return this.tenants.list();
  }

  /** Stops listening and cuts every connection, keep-alive ones included. */
  async close(): Promise<void> {
    this.timers.forEach((timer) => clearTimeout(timer));
    this.timers.clear();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    this.sockets.forEach((socket) => socket.destroy());
    await closed;
  }

  private async dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const path = url.pathname;
    if (path.replace(/\/+$/, '') === PORTALS_CONTROL_PATH) return this.tenants.handleControl(req, res);
    if (path.startsWith(TENANT_PREFIX)) return this.tenants.serve(req, res, url);
    return this.serve(req, res, path, url);
  }
}
