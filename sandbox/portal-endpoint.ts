import { IncomingMessage, ServerResponse } from 'node:http';
import { InstallOutcome } from './app-install';
import { CONTROL_PREFIX, ControlApi } from './control-api';
import { OperatingView, SandboxControls } from './controls';
import { ActiveFault, FaultSpec } from './faults';
import { sendJson } from './http-io';
import { CallQuery, CallView, Inspection } from './inspection';
import { MethodRegistry } from './method-registry';
import { IssuerLookup, OAuthServer, TokenAnswer } from './oauth-server';
import { OperatingPerformance } from './operating-time';
import { PortalState } from './portal-state';
import { handleRecordUpload, UPLOAD_PREFIX } from './record-upload';
import { RequestLogEntry, RequestStats } from './request-log';
import { RestRouter } from './rest-router';
import { WebhookSeed } from './seed';
import { PortalTranscript } from './transcript-store';

/** What a portal answers for a path it does not serve. */
export function sendNotFound(res: ServerResponse): void {
  sendJson(res, 404, { error: 'NOT_FOUND', error_description: 'Not found' });
}

/**
 * One portal as tests reach it: its state, its HTTP areas (`/rest`, `/oauth`, `/_sandbox`, the upload
 * URLs) and the conveniences tests call in process. The root portal and every tenant portal are one of
 * these; only where they listen differs.
 */
export class PortalEndpoint {
  /** The published OAuth application (on tenants: the root's, with the tenant's own application token). */
  readonly oauthApp: { clientId: string; clientSecret: string };
  readonly inspection: Inspection;
  readonly controls: SandboxControls;
  private readonly rest: RestRouter;
  private readonly oauth: OAuthServer;
  private readonly control: ControlApi;

  constructor(
    readonly state: PortalState,
    registry: MethodRegistry,
    sleep: (ms: number) => Promise<void>,
    issuerOf?: IssuerLookup,
  ) {
    this.inspection = new Inspection(state);
    this.controls = new SandboxControls(state);
    const [app] = state.credentials.appList();
    this.oauthApp = { clientId: app?.clientId ?? '', clientSecret: app?.clientSecret ?? '' };
    this.rest = new RestRouter(state, registry, sleep);
    this.oauth = new OAuthServer(state, issuerOf);
    this.control = new ControlApi(state, this.inspection, this.controls);
  }

  /** Every call registered so far (optionally one CALL_ID, EXTERNAL_CALL_ID or USER_ID). */
  calls(query?: CallQuery): CallView[] {
    return this.inspection.calls(query);
  }

  /** Transcripts attached so far, oldest first (optionally one CALL_ID's). */
  transcripts(callId?: string): PortalTranscript[] {
    return this.inspection.transcripts(callId);
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

  /** When the latest commands ran, by method (what a spec checks resumption after a refusal by). */
  operatingRuns(): { at: number; method: string }[] {
    return this.controls.operatingRuns();
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

  /**
   * Removes the application: its tokens die (refreshes get invalid_grant) and ONAPPUNINSTALL is posted to
   * the handlers it bound for it (and to `handlerUrl`, when given).
   */
  uninstallApp(
    handlerUrl?: string,
    clientId = this.oauthApp.clientId,
  ): Promise<(InstallOutcome & { revokedTokenPairs: number; handlers: string[] }) | undefined> {
    return this.controls.uninstallApp(clientId, handlerUrl);
  }

  revokeApp(clientId = this.oauthApp.clientId): number | undefined {
    return this.controls.revokeApp(clientId);
  }

  /** Serves one request; `path` is relative to the portal (`/rest/…`), `url` the request's full URL. */
  async serve(req: IncomingMessage, res: ServerResponse, path: string, url: URL): Promise<void> {
    let local = url;
    if (path !== url.pathname) {
      local = new URL(url);
      local.pathname = path;
    }
    if (path === CONTROL_PREFIX || path.startsWith(`${CONTROL_PREFIX}/`)) {
      return this.control.handle(req, res, local);
    }
    if (path.startsWith(UPLOAD_PREFIX)) {
      if (this.state.faults.outage()) return void req.socket.destroy();
      return handleRecordUpload(this.state, req, res, path.slice(UPLOAD_PREFIX.length));
    }
    const area = /^\/(rest|oauth)(\/|$)/.exec(path)?.[1];
    if (area === undefined) return sendNotFound(res);
    // An injected outage looks like a dead portal: the connection drops without an answer.
    if (this.state.faults.outage()) return void req.socket.destroy();
    return area === 'rest' ? this.rest.handle(req, res, local) : this.oauth.handle(req, res, local);
  }
}
