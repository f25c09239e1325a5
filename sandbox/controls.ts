import { installApp, InstallOutcome, uninstallApp } from './app-install';
import { ActiveFault, FaultSpec } from './faults';
import { tokenAnswer, TokenAnswer } from './oauth-server';
import { MethodOperating, OperatingPerformance, OperatingRefusal } from './operating-time';
import { PortalState } from './portal-state';
import { WebhookSeed } from './seed';

/** The operating-time view of GET /_sandbox/operating. */
export interface OperatingView extends OperatingPerformance {
  methods: Record<string, MethodOperating & { blocked: boolean }>;
  /** Commands refused with OPERATION_TIME_LIMIT since the last reset. */
  refused: number;
  /** The latest refusals (at most 2 000): when, which method, and the use and reset time they reported. */
  refusals: OperatingRefusal[];
  /** Commands that ran, by method, since the last reset. */
  ran: Record<string, number>;
}

/** What tests may change on a running portal: faults, time, credentials, and a reset to the seed. */
export class SandboxControls {
  constructor(private readonly state: PortalState) {}

  injectFault(spec: FaultSpec): ActiveFault {
    return this.state.faults.add(spec);
  }

  operating(): OperatingView {
    const ledger = this.state.operating;
    return {
      ...ledger.performance,
      charge: ledger.chargeMode,
      methods: ledger.snapshot(this.state.now()),
      refused: ledger.refused,
      refusals: [...ledger.refusals],
      ran: { ...ledger.ran },
    };
  }

  /** When the latest commands (up to 20 000) ran, by method, oldest first. */
  operatingRuns(): { at: number; method: string }[] {
    return [...this.state.operating.runs];
  }

  /**
   * Another application's use of `method` (it shares the portal's count): `sec` of server time charged
   * `agoSec` ago (default now), so it leaves the window with that moment's bucket.
   */
  chargeOtherUse(method: string, sec: number, agoSec = 0): MethodOperating {
    const now = this.state.now();
    this.state.operating.charge(method.toLowerCase(), now - agoSec * 1000, sec);
    return this.state.operating.used(method.toLowerCase(), now);
  }

  setPerformance(change: Partial<OperatingPerformance>): OperatingPerformance {
    const ledger = this.state.operating;
    ledger.performance = { ...ledger.performance, ...change };
    return { ...ledger.performance };
  }

  clearFaults(): void {
    this.state.faults.clear();
  }

  reset(): void {
    this.state.reset();
  }

  /** Moves the sandbox clock forward (tokens expire, the register dedupe window passes). */
  advanceClock(ms: number): number {
    this.state.clock.advance(ms);
    return this.state.now();
  }

  addWebhook(hook: WebhookSeed): WebhookSeed & { url: string } {
    this.state.credentials.addWebhook(hook);
    return { ...hook, url: this.webhookUrl(hook) };
  }

  webhookUrl(hook: Pick<WebhookSeed, 'userId' | 'code'>): string {
    return `${this.state.identity.url}/rest/${hook.userId}/${hook.code}/`;
  }

  /** A fresh token pair for the application, as after an authorization; undefined for an unknown client. */
  issueTokens(clientId: string, userId = 1): TokenAnswer | undefined {
    const app = this.state.credentials.app(clientId);
    return app && tokenAnswer(this.state, this.state.credentials.issuePair(app, userId, this.state.now()));
  }

  installApp(clientId: string, handlerUrl: string): Promise<InstallOutcome | undefined> {
    return installApp(this.state, clientId, handlerUrl);
  }

  /** Removes the application: its tokens die and ONAPPUNINSTALL is posted to its bound handlers. */
  uninstallApp(
    clientId: string,
    handlerUrl?: string,
  ): Promise<(InstallOutcome & { revokedTokenPairs: number; handlers: string[] }) | undefined> {
    return uninstallApp(this.state, clientId, handlerUrl);
  }

  /** Kills every token of the application: refreshes get invalid_grant, calls invalid_token. */
  revokeApp(clientId: string): number | undefined {
    return this.state.credentials.app(clientId) ? this.state.credentials.revokeApp(clientId) : undefined;
  }
}
