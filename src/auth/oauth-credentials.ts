import { Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { sameSecret } from '../common/secrets';
import { setTimeout as delay } from 'node:timers/promises';
import { AuthorisationStatus, PortalCredentials, PreparedCall } from '../portal/portal-credentials';
import { PortalError } from '../portal/portal-error';
import { PortalTokens, TokenStore } from '../store/token-store';
import { OAuthSettings, installUrlOf, startUrlOf } from './oauth-settings';
import { OAuthRefusal, OAuthTokenEndpoint, TokenEndpointUnavailable } from './oauth-token-endpoint';
import { PortalAddress } from './portal-address';

/** Refresh this long before the known expiry, at most: a tenth of the token's lifetime. */
const REFRESH_AHEAD_MAX_MS = 60_000;
/** How often a request waiting for another replica's refresh looks at the store again. */
const LEASE_POLL_MS = 100;

/**
 * OAuth application credentials for one portal: `Authorization: Bearer` on `{client_endpoint}/{method}`.
 *
 * The pair lives in the TokenStore, shared by every replica. A refresh (on `expired_token` /
 * `INVALID_TOKEN`, or shortly before the known expiry) runs once per portal at a time: in this process
 * concurrent callers share one promise; across replicas a lease row in the store decides who refreshes,
 * and the others poll and take the new pair from the store. The refreshed pair is committed before it is
 * used, and only while the lease is still ours, so a refresh token is never spent twice.
 */
export class OAuthCredentials extends PortalCredentials {
  readonly portalId: string;
  readonly displayName: string;
  readonly address: PortalAddress;
  readonly tokenEndpoint: OAuthTokenEndpoint;
  private readonly logger: Logger;
  /** Names this instance in the lease row. */
  private readonly leaseOwner = randomBytes(8).toString('hex');
  /** Longer than the refresh request's timeout, so a lease never expires under a live refresh. */
  private readonly leaseMs: number;
  private tokens?: PortalTokens;
  /** Store reads and commits are numbered when they start, so an older read never replaces newer tokens. */
  private reads = 0;
  private adoptedRead = 0;
  private refreshing?: Promise<void>;
  /**
   * The access token a refused call was retried with (a refresh's, or a newer one from the store). When
   * the portal refuses it too, refreshing again cannot help: the pair needs re-authorisation.
   */
  private renewedAccessToken?: string;
  private movedTo?: string;
  private announced?: AuthorisationStatus['state'];
  /** Told the outcome of every refresh this replica makes, for metrics. */
  private readonly grantListeners: (() => void)[] = [];
  onRefresh?: (outcome: 'ok' | 'refused' | 'unavailable') => void;

  constructor(
    readonly settings: OAuthSettings,
    private readonly store: TokenStore,
    private readonly now: () => number = Date.now,
  ) {
    super();
    this.portalId = settings.portalId;
    this.address = new PortalAddress(settings.portalUrl, settings.apiVersion);
    this.tokenEndpoint = new OAuthTokenEndpoint(settings, now);
    this.displayName = `${settings.portalUrl} (OAuth application ${settings.clientId})`;
    this.logger = new Logger(`OAuth ${settings.portalId}`);
    this.leaseMs = settings.timeoutMs + 5000;
  }

  /** Reads the stored pair at start-up, and tells the operator what to do when there is none. */
  async open(): Promise<void> {
    await this.reload();
  }

  async prepare(method: string): Promise<PreparedCall> {
    const tokens = await this.usableTokens();
    return {
      url: this.address.restUrl(method, tokens.clientEndpoint, this.movedTo),
      headers: { 'Content-Type': 'application/json', Authorization: bearer(tokens) },
    };
  }

  async renew(refusal: PortalError, call: PreparedCall): Promise<boolean> {
    const stored = usable(await this.reload());
    if (!stored) return false;
    if (bearer(stored) !== call.headers.Authorization) {
      this.renewedAccessToken = stored.accessToken;
      return true;
    }
    if (refusal.kind === 'credentials' && stored.accessToken === this.renewedAccessToken) {
      if (await this.giveUpOn(stored, refusal)) return false;
    }
    this.logger.debug(`the portal refused the access token (${refusal.code}); refreshing the pair`);
    try {
      await this.refresh(stored.accessToken);
    } catch (error) {
      if (!(error instanceof TokenEndpointUnavailable)) throw error;
      this.logger.warn(`could not refresh the OAuth tokens, delivery retries later: ${error.message}`);
      return false;
    }
    const renewed = usable(this.tokens);
    if (renewed === undefined || bearer(renewed) === call.headers.Authorization) return false;
    this.renewedAccessToken = renewed.accessToken;
    return true;
  }

  /**
   * Marks the pair for re-authorisation, unless a refresh is under way here or on another replica (its
   * lease): the refusal may then only mean that refresh already spent this token.
   */
  private async giveUpOn(stored: PortalTokens, refusal: PortalError): Promise<boolean> {
    const claimed = await this.claimRefresh(stored.accessToken);
    if (!claimed) return false;
    const code = refusal.code || `HTTP ${refusal.status ?? '?'}`;
    await this.store.requireReauthorisation(
      this.portalId,
      `the portal refused the renewed OAuth access token too (${code})`,
      claimed.refreshToken,
    );
    await this.reload();
    return true;
  }

  moveTo(origin: string): void {
    this.movedTo = origin;
  }

  override authorisation(): AuthorisationStatus {
    const start = startUrlOf(this.settings);
    if (!this.tokens) {
      return {
        state: 'awaiting-installation',
        action: `install the application on the portal (handler ${installUrlOf(this.settings)}) or open ${start} as a portal administrator`,
      };
    }
    if (this.tokens.reauthorisationReason) {
      return {
        state: 'needs-reauthorisation',
        action: `${this.tokens.reauthorisationReason}: open ${start} as a portal administrator, or reinstall the application`,
      };
    }
    return { state: 'authorised' };
  }

  /** Stores a pair from an install or the code flow; it replaces whatever was held, even mid-refresh. */
  async acceptGrant(tokens: PortalTokens, source: string): Promise<void> {
    await this.store.saveGrant(tokens);
    await this.reload();
    this.logger.log(`stored new OAuth tokens for portal ${this.portalId} from ${source}`);
    for (const listener of this.grantListeners) listener();
  }

  /** Called after every stored grant (install, re-install, app update, code flow): portal events bind again. */
  onGrant(listener: () => void): () => void {
    this.grantListeners.push(listener);
    // The seeded portal's credentials outlive its runtimes: a closed one's listeners go with it.
    return () => {
      const index = this.grantListeners.indexOf(listener);
      if (index >= 0) this.grantListeners.splice(index, 1);
    };
  }

  /** The portal took the application away (ONAPPUNINSTALL): delivery pauses until it is installed again. */
  async requireReauthorisation(reason: string): Promise<void> {
    await this.store.requireReauthorisation(this.portalId, reason);
    await this.reload();
  }

  /**
   * Another replica stored an uninstall of this portal (ONAPPUNINSTALL): from this moment no request of
   * this process is authorised (`prepare` refuses before anything is sent), then the stored state is read
   * again (a reinstall stored since wins). Reads begun before are not adopted.
   */
  uninstalled(reason: string): Promise<void> {
    const read = ++this.reads;
    if (this.tokens) this.adopt({ ...this.tokens, reauthorisationReason: reason }, read);
    return this.reload().then(() => undefined);
  }

  /** Whether a portal event carries the application token of the stored install (constant time). */
  async isApplicationToken(candidate: string): Promise<boolean> {
    const stored = (await this.store.findTokens(this.portalId))?.applicationToken;
    if (!stored) return false;
    return sameSecret(stored, candidate);
  }

  private async usableTokens(): Promise<PortalTokens> {
    // Without usable tokens here, another replica may have stored new ones since.
    let tokens = usable(this.tokens) ?? usable(await this.reload());
    if (tokens && this.now() >= refreshDueAt(tokens)) {
      try {
        await this.refresh(tokens.accessToken);
      } catch (error) {
        if (!(error instanceof TokenEndpointUnavailable)) throw error;
        this.logger.warn(`could not refresh the OAuth tokens ahead of expiry: ${error.message}`);
      }
      tokens = usable(this.tokens);
    }
    if (!tokens) throw this.unauthorised();
    return tokens;
  }

  /** One refresh at a time in this process: callers arriving meanwhile share it. */
  private refresh(staleAccessToken: string): Promise<void> {
    this.refreshing ??= this.refreshOnce(staleAccessToken).finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  /** Claims the lease and refreshes, or waits for whoever holds it and takes their pair from the store. */
  private async refreshOnce(staleAccessToken: string): Promise<void> {
    const giveUpAt = this.now() + 2 * this.leaseMs;
    for (;;) {
      const read = ++this.reads;
      const claimed = await this.claimRefresh(staleAccessToken);
      if (claimed) {
        this.adopt(claimed, read);
        return this.refreshClaimed(claimed);
      }
      const stored = await this.reload();
      if (!usable(stored) || stored?.accessToken !== staleAccessToken) return;
      if (this.now() > giveUpAt) {
        throw new TokenEndpointUnavailable('another replica holds the refresh lease and has not finished');
      }
      await delay(LEASE_POLL_MS);
    }
  }

  /** The refresh lease for the pair whose access token is `accessToken`: its tokens when this replica has it. */
  private claimRefresh(accessToken: string): Promise<PortalTokens | undefined> {
    return this.store.claimRefresh(this.portalId, accessToken, this.leaseOwner, this.now(), this.leaseMs);
  }

  private async refreshClaimed(claimed: PortalTokens): Promise<void> {
    let pair;
    try {
      pair = await this.tokenEndpoint.refresh(claimed.refreshToken);
    } catch (error) {
      if (error instanceof OAuthRefusal) {
        this.onRefresh?.('refused');
        return this.refused(claimed, error);
      }
      this.onRefresh?.('unavailable');
      await this.store.releaseRefresh(this.portalId, this.leaseOwner);
      throw error;
    }
    this.onRefresh?.('ok');
    // The new pair is durable before anything uses it: a crash from here on leaves it in the store.
    const committed = await this.store.commitRefresh(this.portalId, this.leaseOwner, pair);
    if (!committed) {
      // An install or the code flow replaced the tokens meanwhile: theirs win, this pair is dropped.
      await this.reload();
      return;
    }
    this.adopt(
      { ...claimed, ...pair, clientEndpoint: pair.clientEndpoint ?? claimed.clientEndpoint },
      ++this.reads,
    );
    this.logger.debug(`refreshed the OAuth tokens of portal ${this.portalId}`);
  }

  private async refused(claimed: PortalTokens, refusal: OAuthRefusal): Promise<void> {
    const advice = refusal.code === 'invalid_client' ? ' (check B24_CLIENT_ID and B24_CLIENT_SECRET)' : '';
    await this.store.requireReauthorisation(
      this.portalId,
      `the portal refused to refresh the OAuth tokens (${refusal.message})${advice}`,
      claimed.refreshToken,
    );
    await this.reload();
  }

  private async reload(): Promise<PortalTokens | undefined> {
    const read = ++this.reads;
    this.adopt(await this.store.findTokens(this.portalId), read);
    return this.tokens;
  }

  private adopt(tokens: PortalTokens | undefined, read: number): void {
    if (read < this.adoptedRead) return;
    this.adoptedRead = read;
    this.tokens = tokens;
    this.announce();
  }

  /** One log line each time the state changes, saying what the operator must do. */
  private announce(): void {
    const status = this.authorisation();
    if (status.state === this.announced) return;
    this.announced = status.state;
    if (status.state === 'authorised') {
      this.logger.log(`OAuth tokens for portal ${this.portalId} are in place; delivery runs`);
    } else if (status.state === 'awaiting-installation') {
      this.logger.warn(
        `no OAuth tokens for portal ${this.portalId} yet: delivery waits, nothing is dropped. To start, ${status.action}`,
      );
    } else {
      this.logger.error(
        `OAuth tokens of portal ${this.portalId} are no longer accepted: delivery is paused, nothing is dropped. ` +
          `To resume, ${status.action}`,
      );
    }
  }

  private unauthorised(): PortalError {
    const status = this.authorisation();
    const code = status.state === 'awaiting-installation' ? 'AWAITING_INSTALLATION' : 'NEEDS_REAUTHORISATION';
    return new PortalError('credentials', code, status.action ?? 'the OAuth tokens cannot be used');
  }
}

function usable(tokens: PortalTokens | undefined): PortalTokens | undefined {
  return tokens && !tokens.reauthorisationReason ? tokens : undefined;
}

function bearer(tokens: PortalTokens): string {
  return `Bearer ${tokens.accessToken}`;
}

function refreshDueAt(tokens: PortalTokens): number {
  const lifetime = Math.max(0, tokens.accessExpiresAt - tokens.obtainedAt);
  return tokens.accessExpiresAt - Math.min(REFRESH_AHEAD_MAX_MS, lifetime / 10);
}
