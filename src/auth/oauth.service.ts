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
import { randomBytes } from 'node:crypto';
import { DeliveryService } from '../delivery/delivery.service';
import { PortalClient } from '../portal/portal-client';
import { TokenStore } from '../store/token-store';
import { ApplicationCheck } from './application-check';
import { OAuthCredentials } from './oauth-credentials';
import { DEFAULT_TOKEN_LIFETIME_SEC, OAuthRefusal, TokenGrant } from './oauth-token-endpoint';
import { PortalCredentials } from './portal-credentials';
import { formOf, formText, PortalForm, readInstallPost } from './portal-post';

/** What the application asks the portal for. */
const SCOPE = 'crm,telephony,user';

export interface Authorised {
  portalId: string;
  domain: string;
}

/**
 * How the bridge gets its OAuth tokens (SPEC.md §2): the code flow (/oauth/start → portal → /oauth/callback)
 * and the portal's install post, and how it hears of later portal events. New tokens resume delivery at
 * once. Nothing here answers or logs a token, code or secret.
 */
@Injectable()
export class OAuthService {
  private readonly logger = new Logger('OAuth');
  /** Unset in webhook mode, where every OAuth endpoint answers 404. */
  private readonly mode?: { credentials: OAuthCredentials; check: ApplicationCheck };

  constructor(
    credentials: PortalCredentials,
    client: PortalClient,
    private readonly tokens: TokenStore,
    private readonly delivery: DeliveryService,
  ) {
    if (credentials instanceof OAuthCredentials) {
      const check = new ApplicationCheck(credentials.settings, credentials.address, client.budget);
      this.mode = { credentials, check };
    }
  }

  /** The portal's authorize URL with a fresh single-use `state`, remembered in the store for any replica. */
  async startUrl(): Promise<string> {
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
    return `${settings.portalUrl}/oauth/authorize/?${query}`;
  }

  /** The portal sent the administrator back: check `state`, exchange the code, store the pair. */
  async completeAuthorisation(query: PortalForm): Promise<Authorised> {
    const { credentials } = this.oauth();
    const { settings, address } = credentials;
    const state = formText(query.state);
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
    await credentials.acceptGrant(
      { ...grant, portalId: settings.portalId, domain, memberId, applicationToken: undefined },
      'the authorization code flow',
    );
    this.delivery.resume();
    return { portalId: settings.portalId, domain };
  }

  /**
   * The portal's ONAPPINSTALL post. Stored only once the configured portal confirms, with the posted
   * access token, that the token is this application's on this portal.
   */
  async install(body: unknown): Promise<Authorised> {
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
    const outcome = await check.confirm(post.accessToken, post.memberId);
    if (!outcome.confirmed) {
      this.logger.warn(`an install post was refused, nothing stored: ${outcome.reason}`);
      if (outcome.unreachable) {
        throw new ServiceUnavailableException(`could not confirm the install: ${outcome.reason}`);
      }
      throw new ForbiddenException(`the portal did not confirm the install: ${outcome.reason}`);
    }
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
    this.delivery.resume();
    return { portalId: settings.portalId, domain: post.domain };
  }

  /** A later portal event: accepted only with the stored install's application token. */
  async portalEvent(body: unknown): Promise<{ event: string; handled: boolean }> {
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
      return { event, handled: true };
    }
    return { event, handled: false };
  }

  private oauth(): { credentials: OAuthCredentials; check: ApplicationCheck } {
    if (!this.mode)
      throw new NotFoundException('OAuth application mode is off: the bridge uses an inbound webhook');
    return this.mode;
  }

  private redirectUri(): string {
    const { publicUrl } = this.oauth().credentials.settings;
    if (!publicUrl) {
      throw new ServiceUnavailableException(
        'PUBLIC_URL is not set: the bridge cannot name its /oauth/callback',
      );
    }
    return `${publicUrl}/oauth/callback`;
  }
}
