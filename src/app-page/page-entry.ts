import { HttpStatus, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import type { Request, Response } from 'express';
import { matchesAny, digestsOf } from '../common/secrets';
import { AppConfig } from '../config/app-config';
import { PORTAL_ID, PORTAL_ID_PATTERN } from '../config/portal-id';
import { formOf } from './app-page-form';
import { KeyedBuckets } from '../auth/portal-post-limits';
import { PageResponder } from './page-responder';
import { installDigest, PageSessions } from './page-session';
import { esc, messagePage } from './page-render';
import { languageOf, textFor } from './page-text';
import { PagePortal, PageSource } from './page-source';
import { confirmUser } from './portal-user-check';

/** Source addresses and portals remembered for their limits. */
const KEPT = 10_000;
/**
 * Entries (`POST /app`) the portal did not confirm (each cost the portal a request): 5, then one a minute,
 * per source address, and 10, then one every 30 s, per portal. A confirmed entry gives its credit back, so
 * users who open the page (many behind one office address) are never limited; a forger is, after a handful.
 */
const ENTRY_SOURCE_BURST = 5;
const ENTRY_SOURCE_REFILL_MS = 60_000;
const ENTRY_PORTAL_BURST = 10;
const ENTRY_PORTAL_REFILL_MS = 30_000;

/**
 * Without B24_CLIENT_SECRET (OAuth) or ADMIN_TOKEN (webhook mode) no session could be trusted: a plain page
 * saying what to set, 403 (the bridge is up and the request was fine; what refuses it is this deployment's
 * choice, which no sign-in can change, only its operator). Never a 5xx: nothing failed, and the request log
 * keeps a trace for every 5xx. Said once at start-up too (`PageEntry.onApplicationBootstrap`).
 */
export function sendPageOff(
  response: Response,
  responder: PageResponder,
  lang: string,
  webhook: boolean,
): void {
  const text = textFor(lang);
  responder.headers(response, undefined);
  response.status(HttpStatus.FORBIDDEN).send(
    messagePage(text, lang, webhook ? text.pageOff : text.notEnabled, '', {
      kind: 'prompt',
      heading: text.pageOffTitle,
    }),
  );
}

/**
 * The portal's form post (multi, OAuth) or the admin token's sign-in (webhook mode), which opens a page
 * session. Anyone can post it, and each post costs the portal two requests: limited per source address and
 * per portal (429 naming which, with Retry-After), and those requests wait for the portal's request budget.
 */
@Injectable()
export class PageEntry implements OnApplicationBootstrap {
  private readonly logger = new Logger('AppPage');
  private readonly adminDigests: Buffer[];
  private readonly entrySources = new KeyedBuckets(ENTRY_SOURCE_BURST, ENTRY_SOURCE_REFILL_MS, KEPT);
  private readonly entryPortals = new KeyedBuckets(ENTRY_PORTAL_BURST, ENTRY_PORTAL_REFILL_MS, KEPT);

  constructor(
    private readonly source: PageSource,
    private readonly sessions: PageSessions,
    private readonly responder: PageResponder,
    private readonly config: AppConfig,
    @Inject(PORTAL_ID) private readonly portalId: string,
  ) {
    this.adminDigests = digestsOf(config.ADMIN_TOKEN);
  }

  async enter(request: Request, response: Response): Promise<void> {
    const form = { ...(request.query as Record<string, unknown>), ...formOf(request) };
    const lang = languageOf(form.LANG);
    const text = textFor(lang);
    if (!this.sessions.enabled) return this.pageOff(response, lang);
    if (this.config.authMode === 'webhook') return this.enterWithAdminToken(request, response, form);
    const portalId = this.config.B24_APP_MODE === 'multi' ? String(form.member_id ?? '') : this.portalId;
    const authId = typeof form.AUTH_ID === 'string' ? form.AUTH_ID : '';
    const portal = PORTAL_ID_PATTERN.test(portalId) ? await this.source.portal(portalId) : undefined;
    // One portal with OAuth: the post must name the member_id the install stored (a portal's post always does).
    const otherPortal = portal?.memberId !== undefined && form.member_id !== portal.memberId;
    if (otherPortal) {
      this.logger.warn(`app page: a post naming another member_id than portal ${portalId}'s; refused`);
    }
    if (!portal || !portal.active || otherPortal) {
      this.responder.headers(response, undefined);
      response.status(HttpStatus.NOT_FOUND).send(messagePage(text, lang, text.unknownPortal));
      return;
    }
    if (!authId) return this.refuseEntry(response, portal, lang);
    const credit = this.entryCredit(request, response, portal, lang);
    if (!credit) return;
    this.responder.headers(response, portal.clientEndpoint, portal.domain);
    // The posted DOMAIN is the browser's word: the token is checked where the verified install said the
    // portal is, within that portal's request budget.
    const user = await confirmUser(
      portal.clientEndpoint,
      authId,
      this.config.B24_TIMEOUT_MS,
      await this.source.budget(portal.portalId),
    );
    if (!user) return this.refuseEntry(response, portal, lang);
    credit.confirmed();
    const opened = this.sessions.verify(
      this.sessions.open({
        portalId: portal.portalId,
        userId: user.userId,
        admin: user.admin,
        lang,
        install: installDigest(portal.installation),
        auth: authId,
      }),
    );
    await this.responder.render(response, opened!, {});
  }

  private refuseEntry(response: Response, portal: PagePortal, lang: string): void {
    this.logger.warn(`app page: portal ${portal.portalId} did not confirm the posted AUTH_ID; refused`);
    this.responder.headers(response, portal.clientEndpoint, portal.domain);
    response.status(HttpStatus.UNAUTHORIZED).send(messagePage(textFor(lang), lang, textFor(lang).refused));
  }

  /**
   * Whether an entry post may be checked with the portal now: its source address and its portal each have
   * credit for one more unconfirmed entry (taken now, given back by `confirmed()`). Otherwise answered 429
   * with Retry-After, naming which, and the portal is not asked.
   */
  private entryCredit(
    request: Request,
    response: Response,
    portal: PagePortal | undefined,
    lang: string,
  ): { confirmed(): void } | undefined {
    const text = textFor(lang);
    const source = this.entrySources.of(request.ip ?? request.socket.remoteAddress ?? 'unknown');
    const own = portal ? this.entryPortals.of(portal.portalId) : undefined;
    const sourceWait = source.level() >= 1 ? 0 : Math.ceil(source.msUntilNext() / 1000);
    const portalWait = !own || own.level() >= 1 ? 0 : Math.ceil(own.msUntilNext() / 1000);
    if (sourceWait === 0 && portalWait === 0) {
      source.take();
      own?.take();
      return {
        confirmed: () => {
          source.giveBack();
          own?.giveBack();
        },
      };
    }
    const which = sourceWait > 0 ? 'from this address' : 'for this portal';
    const waitSec = Math.max(sourceWait, portalWait);
    this.responder.headers(response, portal?.clientEndpoint, portal?.domain);
    response.setHeader('Retry-After', String(waitSec));
    response
      .status(HttpStatus.TOO_MANY_REQUESTS)
      .send(
        messagePage(
          text,
          lang,
          `${text.tooManyEntries} ${which}: ${text.retryIn.replace('{s}', String(waitSec))}`,
        ),
      );
    this.logger.warn(`app page: too many unconfirmed entries ${which}; refused for ${waitSec} s`);
    return undefined;
  }

  pageOff(response: Response, lang: string): void {
    sendPageOff(response, this.responder, lang, this.config.authMode === 'webhook');
  }

  /** At start-up: the page is off, and how to turn it on (one line, not one per request). */
  onApplicationBootstrap(): void {
    if (this.sessions.enabled) return;
    this.logger.warn(
      this.config.authMode === 'webhook'
        ? "the application's page (/app) is off: set ADMIN_TOKEN in the bridge's environment and restart to sign in to it"
        : "the application's page (/app) is off: B24_CLIENT_SECRET is not set",
    );
  }

  private async enterWithAdminToken(
    request: Request,
    response: Response,
    form: Record<string, unknown>,
  ): Promise<void> {
    const lang = languageOf(form.LANG);
    const text = textFor(lang);
    this.responder.headers(response, this.config.B24_WEBHOOK_URL);
    const signIn = `<form method="post" action="/app"><input type="hidden" name="LANG" value="${esc(lang)}"><div class="field"><label for="token">${esc(text.adminToken)}</label><input id="token" name="token" type="password" autocomplete="current-password" required></div><button type="submit">${esc(text.signIn)}</button></form>`;
    const token = typeof form.token === 'string' ? form.token : '';
    if (request.method !== 'POST' || !token) {
      response
        .status(HttpStatus.OK)
        .send(messagePage(text, lang, text.signInPrompt, signIn, { kind: 'prompt' }));
      return;
    }
    const credit = this.entryCredit(request, response, undefined, lang);
    if (!credit) return;
    if (!this.adminDigests.length || !matchesAny(token, this.adminDigests)) {
      this.logger.warn('app page: a wrong admin token was posted; refused');
      response.status(HttpStatus.UNAUTHORIZED).send(messagePage(text, lang, text.wrongAdminToken, signIn));
      return;
    }
    credit.confirmed();
    const portal = await this.source.portal(this.portalId);
    const opened = this.sessions.verify(
      this.sessions.open({
        portalId: this.portalId,
        userId: 0,
        admin: true,
        lang,
        install: installDigest(portal?.installation ?? 'webhook'),
      }),
    );
    await this.responder.render(response, opened!, {});
  }
}
