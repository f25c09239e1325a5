import {
  BadRequestException,
  ForbiddenException,
  Injectable,
  Logger,
  ServiceUnavailableException,
  UnauthorizedException,
} from '@nestjs/common';
import { OAuthRefusal, OAuthTokenEndpoint, TokenGrant } from '../auth/oauth-token-endpoint';
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { InstallQueue, InstallQueueLimits, InstallVerdict } from '../auth/portal-post-limits';
import { formOf, formText, InstallPost, readInstallPost } from '../auth/portal-post';
import { PortalInstalls } from '../auth/portal-installs';
import { sameSecret } from '../common/secrets';
import { PORTAL_ID_PATTERN } from '../config/portal-id';
import { WorkSignal } from '../common/work-signal';
import { domainAllowed } from '../portal/portal-redirects';
import { PortalEventStore } from '../store/portal-event-store';
import { PortalStore } from '../store/portal-store';
import { TokenStore } from '../store/token-store';
import { PortalRegistry } from './portal-registry';
import { RegistryDeps } from './registry-deps';

/**
 * Install checks at the vendor's OAuth server (docs/decisions/many-portals.md, "Installs nobody can forge"):
 * 8 at once, 20 and then 10 a second started, queued (never refused for rate) up to 5,000 posts for 30 s
 * (the vendor waits about 10 s for the answer). Failed checks cost their source: 5, then one a minute per
 * address; 4, then one every two minutes for all addresses without a confirmed install yet together.
 */
const INSTALL_QUEUE: InstallQueueLimits = {
  concurrency: 8,
  burst: 20,
  refillMs: 100,
  sourceCredit: 5,
  sourceRefillMs: 60_000,
  strangerCredit: 4,
  strangerRefillMs: 120_000,
  provenMs: 24 * 3_600_000,
  maxWaiting: 5_000,
  waitMs: 30_000,
  forgedMs: 10 * 60_000,
};
/** Refresh tokens the OAuth server refused (invalid_grant), remembered by hash: a replay is not sent again. */
const REFUSED_KEPT = 10_000;

/**
 * Installs of the published application (`B24_APP_MODE=multi`, the API contract (docs/API.md)). Anyone can post an install
 * naming any `member_id` and any endpoint, so nothing in the post is believed: the posted refresh token is
 * exchanged at the vendor's OAuth server (`B24_OAUTH_URL`, with the client secret), whose answer names the
 * portal (`member_id`, `domain`, `client_endpoint`) the tokens really belong to. Only a post whose
 * `member_id` that answer confirms is stored, with the fresh pair from that answer; a forged post (another
 * portal's member_id, an endpoint of the poster's) plants nothing. `B24_ALLOWED_DOMAINS`, when set, names
 * the portals that may install.
 */
@Injectable()
export class MultiPortalInstalls extends PortalInstalls {
  private readonly logger = new Logger('Installs');
  private readonly endpoint: OAuthTokenEndpoint;
  private readonly queue = new InstallQueue(INSTALL_QUEUE);
  private readonly refused = new LRUCache<string, OAuthRefusal>({ max: REFUSED_KEPT });
  private readonly allowedDomains: readonly string[];

  private readonly tokens: TokenStore;
  private readonly portals: PortalStore;
  private readonly events: PortalEventStore;

  constructor(
    deps: RegistryDeps,
    private readonly registry: PortalRegistry,
    private readonly signal: WorkSignal,
  ) {
    super();
    const { auth, portal } = deps;
    ({ tokens: this.tokens, portals: this.portals, portalEvents: this.events } = deps);
    this.allowedDomains = portal.allowedDomains;
    this.endpoint = new OAuthTokenEndpoint({
      portalId: '',
      portalUrl: '',
      oauthUrl: new URL(auth.oauthUrl ?? 'http://unset.invalid').origin,
      clientId: auth.clientId ?? '',
      clientSecret: auth.clientSecret ?? '',
      stateTtlMs: auth.stateTtlMs,
      timeoutMs: portal.timeoutMs,
    });
  }

  /**
   * Cheap checks first, none of which spends the client secret: the post's shape, a member_id that can be a
   * portal id, the domain allowed, a refresh token the OAuth server already refused; then the install
   * queue (one check per claimed portal at once, the same post once, forgeries charged to their source),
   * and only then the OAuth server.
   */
  async install(
    body: unknown,
    source: string,
  ): Promise<{ portalId: string; domain: string; unchanged?: boolean }> {
    const post = readInstallPost(body);
    if ('problem' in post) throw new BadRequestException(post.problem);
    if (!PORTAL_ID_PATTERN.test(post.memberId)) throw new BadRequestException('malformed auth[member_id]');
    if (!this.allowed(post.domain)) {
      this.logger.warn(
        `an install from a portal outside B24_ALLOWED_DOMAINS was refused (${post.domain.slice(0, 100)})`,
      );
      throw new ForbiddenException('this portal may not install the application (B24_ALLOWED_DOMAINS)');
    }
    const refreshKey = createHash('sha256').update(post.refreshToken).digest('hex');
    const refusedBefore = this.refused.get(refreshKey);
    if (refusedBefore) return this.repeated(post.memberId, post.applicationToken, refusedBefore);
    return this.queue.run({ claim: post.memberId, identity: refreshKey, source }, () =>
      this.check(post, refreshKey),
    );
  }

  /** The check itself: the refresh token spent at the OAuth server, whose answer alone is believed. */
  private async check(
    post: InstallPost,
    refreshKey: string,
  ): Promise<InstallVerdict<{ portalId: string; domain: string; unchanged?: boolean }>> {
    let grant: TokenGrant;
    try {
      grant = await this.endpoint.refresh(post.refreshToken);
    } catch (error) {
      if (error instanceof OAuthRefusal) {
        // A refused refresh token stays refused: its replays are answered without the OAuth server.
        if (error.code === 'invalid_grant') this.refused.set(refreshKey, error);
        try {
          return { confirmed: true, value: await this.repeated(post.memberId, post.applicationToken, error) };
        } catch (refusal) {
          return { confirmed: false, forged: true, error: refusal };
        }
      }
      this.logger.warn(`an install could not be checked with the OAuth server: ${(error as Error).message}`);
      return {
        confirmed: false,
        forged: false,
        error: new ServiceUnavailableException(
          'the OAuth server could not confirm the install; post it again',
        ),
      };
    }
    if (grant.memberId !== post.memberId) {
      this.logger.warn(
        'an install post whose tokens belong to another portal (member_id) was refused; nothing stored',
      );
      return {
        confirmed: false,
        forged: true,
        error: new ForbiddenException(
          'the OAuth server says the tokens belong to another portal (member_id)',
        ),
      };
    }
    const clientEndpoint =
      grant.clientEndpoint ?? (grant.domain ? `https://${grant.domain}/rest/` : undefined);
    const domain = grant.domain ?? (clientEndpoint ? new URL(clientEndpoint).host : post.domain);
    if (!clientEndpoint || !/^https?:\/\//.test(clientEndpoint)) {
      return {
        confirmed: false,
        forged: false,
        error: new ServiceUnavailableException(
          'the OAuth server named no endpoint for the portal; post it again',
        ),
      };
    }
    if (!this.allowed(domain)) {
      return {
        confirmed: false,
        forged: true,
        error: new ForbiddenException('this portal may not install the application (B24_ALLOWED_DOMAINS)'),
      };
    }
    const portalId = post.memberId;
    const now = Date.now();
    // One transaction: the portal's record and its tokens, or neither.
    await this.portals.saveInstall({
      portalId,
      domain,
      clientEndpoint,
      now,
      grant: {
        portalId,
        memberId: portalId,
        domain,
        clientEndpoint,
        accessToken: grant.accessToken,
        refreshToken: grant.refreshToken,
        accessExpiresAt: grant.accessExpiresAt,
        obtainedAt: grant.obtainedAt,
        applicationToken: post.applicationToken,
      },
    });
    this.logger.log(`portal ${portalId} (${domain}) installed the application`);
    await this.registry.sync();
    this.signal.credentialsRenewed(portalId);
    return { confirmed: true, value: { portalId, domain } };
  }

  async portalEvent(body: unknown): Promise<{ event: string; handled: boolean }> {
    const form = formOf(body);
    const auth = formOf(form.auth);
    const token = formText(auth.application_token);
    const memberId = formText(auth.member_id);
    const stored = memberId ? await this.tokens.findTokens(memberId) : undefined;
    if (!token || !stored?.applicationToken || !sameSecret(stored.applicationToken, token)) {
      this.logger.warn('a portal event without the application token of its portal was refused');
      throw new UnauthorizedException('unknown application_token for this member_id');
    }
    const event = formText(form.event)?.toUpperCase() ?? '';
    if (event !== 'ONAPPUNINSTALL') return { event, handled: false };
    await this.uninstall(stored.portalId);
    return { event, handled: true };
  }

  /**
   * The portal's ONAPPUNINSTALL (its application token checked by the caller): stored as uninstalled
   * (PORTAL_RETENTION_DAYS starts), then every replica told at once (docs/decisions/portal-events.md):
   * each one's runtime of the portal refuses to send from that moment, and is closed.
   */
  async uninstall(portalId: string): Promise<void> {
    // A repeated post changes nothing: the retention period runs from the first.
    if ((await this.portals.findPortal(portalId))?.status === 'uninstalled') return;
    await this.tokens.requireReauthorisation(
      portalId,
      'the application was uninstalled from the portal (ONAPPUNINSTALL)',
    );
    await this.portals.markUninstalled(portalId, Date.now());
    await this.events.publish({ portalId, kind: 'uninstalled' });
    this.logger.log(
      `portal ${portalId} uninstalled the application: paused, its data kept for PORTAL_RETENTION_DAYS`,
    );
    await this.registry.sync();
  }

  /**
   * The posted refresh token was refused: a portal repeating an install it already made (its refresh token
   * was spent by the first check) gets its answer again when the application token is the stored one.
   */
  private async repeated(
    memberId: string,
    applicationToken: string,
    refusal: OAuthRefusal,
  ): Promise<{ portalId: string; domain: string; unchanged: true }> {
    const stored = await this.tokens.findTokens(memberId);
    const record = await this.portals.findPortal(memberId);
    if (
      stored?.applicationToken &&
      sameSecret(stored.applicationToken, applicationToken) &&
      record?.status === 'active'
    ) {
      return { portalId: memberId, domain: record.domain, unchanged: true };
    }
    this.logger.warn(`an install post was refused by the OAuth server (${refusal.code}); nothing stored`);
    throw new ForbiddenException(`the OAuth server did not confirm the posted tokens (${refusal.code})`);
  }

  private allowed(domain: string): boolean {
    return this.allowedDomains.length === 0 || domainAllowed(domain, this.allowedDomains);
  }
}
