import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo, Socket } from 'node:net';
import { InstallOutcome } from './app-install';
import { CONTROL_PREFIX, ControlApi } from './control-api';
import { OperatingView, SandboxControls } from './controls';
import { OperatingPerformance } from './operating-time';
import { ActiveFault, FaultSpec } from './faults';
import { sendJson } from './http-io';
import { CallQuery, CallView, Inspection } from './inspection';
import { portalMethods } from './methods';
import { OAuthServer, TokenAnswer } from './oauth-server';
import { PortalState } from './portal-state';
import { RequestLogEntry, RequestStats } from './request-log';
import { handleRecordUpload, UPLOAD_PREFIX } from './record-upload';
import { RestRouter } from './rest-router';
import { defaultSeed, SandboxSeed, WebhookSeed } from './seed';

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
  /** attachRecord tries RECORD_URL once while answering and fails when it cannot download it (default off). */
  downloadRecordUrls?: boolean;
}

/** A running sandbox portal: the portal's REST API, its OAuth server and the test control API over HTTP. */
export class SandboxPortal {
  /** Base URL without trailing slash, e.g. http://127.0.0.1:45123. */
  readonly url: string;
  /** The default full-rights webhook base, `${url}/rest/1/<code>/`. */
  readonly webhookUrl: string;
  /** The default OAuth application. */
  readonly oauthApp: { clientId: string; clientSecret: string };
  readonly inspection: Inspection;
  readonly controls: SandboxControls;
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly rest: RestRouter;
  private readonly oauth: OAuthServer;
  private readonly control: ControlApi;

  private constructor(
    private readonly server: Server,
    readonly state: PortalState,
  ) {
    const { port } = server.address() as AddressInfo;
    const host = (server.address() as AddressInfo).address;
    this.url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    state.setAddress(this.url);
    this.inspection = new Inspection(state);
    this.controls = new SandboxControls(state);
    const [hook] = state.credentials.webhookList();
    this.webhookUrl = hook ? this.controls.webhookUrl(hook) : `${this.url}/rest/`;
    const [app] = state.credentials.appList();
    this.oauthApp = { clientId: app?.clientId ?? '', clientSecret: app?.clientSecret ?? '' };

    this.rest = new RestRouter(state, portalMethods(), (ms) => this.sleep(ms));
    this.oauth = new OAuthServer(state);
    this.control = new ControlApi(state, this.inspection, this.controls);
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      this.dispatch(req, res).catch((error: unknown) => {
        console.error('sandbox portal: request failed', error);
        if (!res.headersSent)
          sendJson(res, 500, { error: 'INTERNAL_SERVER_ERROR', error_description: 'Internal server error' });
        else res.destroy();
      });
    });
  }

  static async start(options: SandboxOptions = {}): Promise<SandboxPortal> {
    const state = new PortalState({
      seed: { ...defaultSeed(), ...options.seed },
      rateLimitRps: options.rateLimitRps ?? 2,
      rateBurst: options.rateBurst ?? 50,
      accessTokenTtlSec: options.accessTokenTtlSec ?? 3600,
      expiredTokenError: options.expiredTokenError ?? 'expired_token',
      requestLogLimit: options.requestLogLimit ?? 20000,
      commandMs: options.commandMs ?? 0,
      operatingWindowSec: options.operatingWindowSec ?? 600,
      operatingLimitSec: options.operatingLimitSec ?? 480,
    });
    const server = createServer({ keepAliveTimeout: 5000 });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    state.downloadRecordUrls = options.downloadRecordUrls ?? false;
    return new SandboxPortal(server, state);
  }

  /** Every call registered so far (optionally one CALL_ID, EXTERNAL_CALL_ID or USER_ID). */
  calls(query?: CallQuery): CallView[] {
    return this.inspection.calls(query);
  }

  requests(sinceMs?: number): RequestLogEntry[] {
    return this.state.requestLog.list(sinceMs);
  }

  stats(): RequestStats {
    return this.state.requestLog.snapshot();
  }

  /** Each method's server time in the operating window, and the performance settings. */
  operating(): OperatingView {
    return this.controls.operating();
  }

  /** Changes the server time per command or the operating-time limit of the running portal. */
  setPerformance(change: Partial<OperatingPerformance>): OperatingPerformance {
    return this.controls.setPerformance(change);
  }

  injectFault(spec: FaultSpec): ActiveFault {
    return this.controls.injectFault(spec);
  }

  clearFaults(): void {
    this.controls.clearFaults();
  }

  reset(): void {
    this.controls.reset();
  }

  advanceClock(ms: number): number {
    return this.controls.advanceClock(ms);
  }

  addWebhook(hook: WebhookSeed): WebhookSeed & { url: string } {
    return this.controls.addWebhook(hook);
  }

  issueTokens(clientId = this.oauthApp.clientId, userId = 1): TokenAnswer | undefined {
    return this.controls.issueTokens(clientId, userId);
  }

  installApp(handlerUrl: string, clientId = this.oauthApp.clientId): Promise<InstallOutcome | undefined> {
    return this.controls.installApp(clientId, handlerUrl);
  }

  revokeApp(clientId = this.oauthApp.clientId): number | undefined {
    return this.controls.revokeApp(clientId);
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
    if (path === CONTROL_PREFIX || path.startsWith(`${CONTROL_PREFIX}/`))
      return this.control.handle(req, res, url);
    if (path.startsWith(UPLOAD_PREFIX)) {
      if (this.state.faults.outage()) return void req.socket.destroy();
      return handleRecordUpload(this.state, req, res, path.slice(UPLOAD_PREFIX.length));
    }
    const area = /^\/(rest|oauth)(\/|$)/.exec(path)?.[1];
    if (area === undefined) return sendJson(res, 404, { error: 'NOT_FOUND', error_description: 'Not found' });
    // An injected outage looks like a dead portal: the connection drops without an answer.
    if (this.state.faults.outage()) return void req.socket.destroy();
    return area === 'rest' ? this.rest.handle(req, res, url) : this.oauth.handle(req, res, url);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        resolve();
      }, ms);
      this.timers.add(timer);
    });
  }
}
