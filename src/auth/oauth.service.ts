import {
  BadGatewayException,
  BadRequestException,
  ForbiddenException,
  Injectable,
  Logger,
  NotFoundException,
  ServiceUnavailableException,
  UnauthorizedException,
} from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import { sameSecret } from '../common/secrets';
import { WorkSignal } from '../common/work-signal';
import { PortalEventStore } from '../store/portal-event-store';
import { TokenStore } from '../store/token-store';
import { ApplicationCheck, ApplicationCheckOutcome } from './application-check';
import { OAuthCredentials } from './oauth-credentials';
import { OAuthPorts } from './oauth-ports';
import { PortalInstalls } from './portal-installs';
import { DEFAULT_TOKEN_LIFETIME_SEC, OAuthRefusal, TokenGrant } from './oauth-token-endpoint';
import { InstallQueue, InstallQueueLimits } from './portal-post-limits';
import { formOf, formText, InstallPost, PortalForm, readInstallPost } from './portal-post';

/** What the application asks the portal for. */
const SCOPE = 'crm,telephony,user';

/**
 * Install checks with the one portal (app.info, user.admin; its request budget pays for them): one at once
 * (one claim), queued for up to 30 s; failed ones cost their source 3, then one a minute, and all sources
 * without a confirmed install together 4, then one every two minutes (docs/OPERATIONS.md).
 */
const INSTALL_QUEUE: InstallQueueLimits = {
  concurrency: 1,
  burst: 4,
  refillMs: 15_000,
  sourceCredit: 3,
  sourceRefillMs: 60_000,
  strangerCredit: 4,
  strangerRefillMs: 120_000,
  provenMs: 24 * 3_600_000,
  maxWaiting: 1_000,
  waitMs: 30_000,
  forgedMs: 10 * 60_000,
};

export interface Authorised {
  portalId: string;
  domain: string;
}

/** What /oauth/start hands the browser: where to go, and the state to bind to it (an HttpOnly cookie). */
export interface AuthorisationStart {
  url: string;
  state: string;
  ttlMs: number;
}

/**
 * How the bridge gets its OAuth tokens (docs/API.md): the code flow (/oauth/start → portal → /oauth/callback)
 * and the portal's install post, and how it hears of later portal events. New tokens resume delivery at
 * once. Nothing here answers or logs a token, code or secret.
 */
@Injectable()
export class OAuthService {
  private readonly logger = new Logger('OAuth');
  /** Unset in webhook mode, where every OAuth endpoint answers 404. */
  private readonly mode?: { credentials: OAuthCredentials; check: ApplicationCheck };
  private readonly installQueue = new InstallQueue(INSTALL_QUEUE);

  /** Many portals: installs and events go to the portal registry. */
  private readonly installs?: PortalInstalls;
  /** Tells the other replicas of an uninstall, so they stop sending at once too. */
  private readonly events?: PortalEventStore;

  constructor(
    private readonly tokens: TokenStore,
    private readonly signal: WorkSignal,
    ports: OAuthPorts,
  ) {
    const { credentials, client } = ports;
    this.installs = ports.installs;
    this.events = ports.events;
    if (credentials instanceof OAuthCredentials && client) {
      const check = new ApplicationCheck(credentials.settings, credentials.address, client.budget);
      this.mode = { credentials, check };
    }
  }

  /** In webhook mode every OAuth endpoint answers 404, whatever else is wrong with the request. */
  get enabled(): boolean {
    return this.mode !== undefined || this.installs !== undefined;
  }

  /**
   * The portal's authorize URL with a fresh single-use `state`, remembered in the store for any replica;
   * the caller binds the state to the browser, and the callback accepts it only from that browser.
   */
  async start(): Promise<AuthorisationStart> {
    const { settings } = this.oauth().credentials;
    const state = randomBytes(24).toString('base64url');
    const now = Date.now();
    await this.tokens.saveAuthorisationState(state, settings.portalId, now + settings.stateTtlMs, now);
    const query = new URLSearchParams({
      client_id: settings.clientId,
      response_type: 'code',
      redirect_uri: this.redirectUri(),
      scope: SCOPE,
      state,
    });
    return { url: `${settings.portalUrl}/oauth/authorize/?${query}`, state, ttlMs: settings.stateTtlMs };
  }

  /**
   * The portal sent the administrator back: check `state` against the one bound to the browser
   * (`browserState`, from its cookie), exchange the code, and store the pair; a working pair is replaced
   * only by one whose user is a portal administrator.
   */
  async completeAuthorisation(query: PortalForm, browserState: string | undefined): Promise<Authorised> {
    const { credentials, check } = this.oauth();
    const { settings, address } = credentials;
    const state = formText(query.state);
    if (state && !sameSecret(state, browserState)) {
      this.logger.warn('an OAuth callback came from a browser that did not start it; nothing stored');
      throw new BadRequestException(
        'the state was not started in this browser: open /oauth/start in the browser that completes it',
      );
    }
    if (!state || !(await this.tokens.takeAuthorisationState(state, settings.portalId, Date.now()))) {
      this.logger.warn('an OAuth callback came with an unknown, expired or used state; nothing stored');
      throw new BadRequestException('unknown, expired or already used state: start again at /oauth/start');
    }
    const declined = formText(query.error);
    if (declined) throw new BadRequestException(`the portal did not authorise the application (${declined})`);
    const code = formText(query.code);
    if (!code) throw new BadRequestException('code is missing');
    let grant: TokenGrant;
    try {
      grant = await credentials.tokenEndpoint.exchangeCode(code, this.redirectUri());
    } catch (error) {
      this.logger.warn(`the authorization code exchange failed: ${(error as Error).message}`);
      if (error instanceof OAuthRefusal) {
        throw new BadRequestException(`the portal refused the authorization code (${error.code})`);
      }
      throw new BadGatewayException(
        'the portal token endpoint could not be reached; start again at /oauth/start',
      );
    }
    const domain = grant.domain ?? address.domain;
    const memberId = grant.memberId ?? formText(query.member_id);
    const endpointOk = !grant.clientEndpoint || address.isThisPortalEndpoint(grant.clientEndpoint);
    if (!address.isThisPortal(domain) || !endpointOk || !memberId) {
      this.logger.warn(
        `an authorization for another portal (${domain.slice(0, 100)}) was refused; nothing stored`,
      );
      throw new ForbiddenException('the authorization is for a portal other than B24_PORTAL_URL');
    }
    if (await this.holdsWorkingPair()) {
      const admin = await check.confirmAdministrator(grant.accessToken);
      if (!admin.confirmed) this.refuse('an authorization', admin, 'the working tokens were kept');
    }
    await credentials.acceptGrant(
      { ...grant, portalId: settings.portalId, domain, memberId, applicationToken: undefined },
      'the authorization code flow',
    );
    this.signal.credentialsRenewed();
    return { portalId: settings.portalId, domain };
  }

  /**
   * The portal's ONAPPINSTALL post. Cheap checks first (fields, portal, member_id of the stored install),
   * then, through the install queue (the same post checked once, forgeries charged to their source), the
   * configured portal must confirm with the posted access token
   * that it is this application's on this portal, and, before a working pair is replaced, that its user
   * is an administrator. A post repeating the stored pair changes nothing and costs nothing.
   */
  async install(body: unknown, source = 'unknown'): Promise<Authorised & { unchanged?: boolean }> {
    if (this.installs) return this.installs.install(body, source);
    const { credentials, check } = this.oauth();
    const { address, settings } = credentials;
    const post = readInstallPost(body);
    if ('problem' in post) throw new BadRequestException(post.problem);
    if (
      !address.isThisPortal(post.domain) ||
      (post.clientEndpoint && !address.isThisPortalEndpoint(post.clientEndpoint))
    ) {
      this.logger.warn(
        `an install post for another portal (${post.domain.slice(0, 100)}) was refused; nothing stored`,
      );
      throw new ForbiddenException('the install post names a portal other than B24_PORTAL_URL');
    }
    const stored = await this.tokens.findTokens(settings.portalId);
    if (stored && stored.memberId !== post.memberId) {
      this.logger.warn('an install post naming another member_id than the installed portal was refused');
      throw new ForbiddenException('auth[member_id] is not the member_id of the installed portal');
    }
    const working = stored && !stored.reauthorisationReason ? stored : undefined;
    if (
      working &&
      sameSecret(working.accessToken, post.accessToken) &&
      sameSecret(working.refreshToken, post.refreshToken)
    ) {
      return { portalId: settings.portalId, domain: post.domain, unchanged: true };
    }
    const identity = createHash('sha256')
      .update(`${post.accessToken}\u0000${post.refreshToken}`)
      .digest('hex');
    await this.installQueue.run({ claim: settings.portalId, identity, source }, async () => {
      try {
        const outcome = await check.confirm(post.accessToken, post.memberId);
        if (!outcome.confirmed) this.refuse('an install post', outcome, 'nothing stored');
        if (working) {
          const admin = await check.confirmAdministrator(post.accessToken);
          if (!admin.confirmed) this.refuse('an install post', admin, 'the working tokens were kept');
        }
        return { confirmed: true, value: undefined };
      } catch (error) {
        // The portal refused (403): a forgery, charged to its source; it could not be asked (503): not.
        return { confirmed: false, forged: error instanceof ForbiddenException, error };
      }
    });
    await this.keepInstall(post);
    return { portalId: settings.portalId, domain: post.domain };
  }

  /** A later portal event: accepted only with the stored install's application token. */
  async portalEvent(body: unknown): Promise<{ event: string; handled: boolean }> {
    if (this.installs) return this.installs.portalEvent(body);
    const { credentials } = this.oauth();
    const form = formOf(body);
    const token = formText(formOf(form.auth).application_token);
    if (!token || !(await credentials.isApplicationToken(token))) {
      this.logger.warn('a portal event without the application token of the install was refused');
      throw new UnauthorizedException('unknown application_token');
    }
    const event = formText(form.event)?.toUpperCase() ?? '';
    if (event === 'ONAPPUNINSTALL') {
      await credentials.requireReauthorisation(
        'the application was uninstalled from the portal (ONAPPUNINSTALL)',
      );
      await this.events?.publish({ portalId: credentials.settings.portalId, kind: 'uninstalled' });
      return { event, handled: true };
    }
    return { event, handled: false };
  }

  private async keepInstall(post: InstallPost): Promise<void> {
    const { credentials } = this.oauth();
    const { settings } = credentials;
    const obtainedAt = Date.now();
    const { lifetimeSec, ...tokens } = post;
    await credentials.acceptGrant(
      {
        ...tokens,
        portalId: settings.portalId,
        accessExpiresAt: obtainedAt + (lifetimeSec ?? DEFAULT_TOKEN_LIFETIME_SEC) * 1000,
        obtainedAt,
      },
      'the install post (ONAPPINSTALL)',
    );
    this.signal.credentialsRenewed();
  }

  /** Whether the stored pair is one the portal still accepts: replacing it needs an administrator. */
  private async holdsWorkingPair(): Promise<boolean> {
    const stored = await this.tokens.findTokens(this.oauth().credentials.settings.portalId);
    return stored !== undefined && !stored.reauthorisationReason;
  }

  /** 503 when the portal could not be asked (try again), else 403; logged without any secret. */
  private refuse(
    what: string,
    outcome: Extract<ApplicationCheckOutcome, { confirmed: false }>,
    kept: string,
  ): never {
    this.logger.warn(`${what} was refused, ${kept}: ${outcome.reason}`);
    if (outcome.unreachable) {
      throw new ServiceUnavailableException(`could not confirm with the portal: ${outcome.reason}`);
    }
    throw new ForbiddenException(`the portal did not confirm: ${outcome.reason}; ${kept}`);
  }

  private oauth(): { credentials: OAuthCredentials; check: ApplicationCheck } {
    if (!this.mode && this.installs) {
      throw new NotFoundException(
        'B24_APP_MODE=multi: portals install the application from their marketplace (ONAPPINSTALL to /oauth/install)',
      );
    }
    if (!this.mode) {
      throw new NotFoundException('OAuth application mode is off: the bridge uses an inbound webhook');
    }
    return this.mode;
  }

  /** `PUBLIC_URL`: the bridge as browsers and the portal reach it. */
  get publicUrl(): string {
    const { publicUrl } = this.oauth().credentials.settings;
    if (!publicUrl) {
      throw new ServiceUnavailableException(
        'PUBLIC_URL is not set: the bridge cannot name its /oauth/callback',
      );
    }
    return publicUrl;
  }

  private redirectUri(): string {
    return `${this.publicUrl}/oauth/callback`;
  }
}
