import {
  All,
  Controller,
  Get,
  HttpCode,
  HttpStatus,
  Inject,
  Logger,
  Param,
  Post,
  Req,
  Res,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CallRecord } from '../calls/call';
import { LRUCache } from 'lru-cache';
import { TokenBucket } from '../auth/portal-post-limits';
import { requeueAllFailed, requeueCalls, RequeueDeps } from '../admin/requeue';
import { matchesAny, digestsOf } from '../common/secrets';
import { WorkSignal } from '../common/work-signal';
import { AppConfig } from '../config/app-config';
import { PORTAL_ID, PORTAL_ID_PATTERN } from '../config/portal-id';
import { DeliverySettings } from '../config/settings';
import { CallStore } from '../store/call-store';
import { SettingProblem } from '../tenancy/portal-settings-check';
import { DialTest } from './dial-test';
import { FollowTest } from './follow-test';
import { installDigest, PageSession, PageSessions } from './page-session';
import { esc, messagePage, PageCall, PageModel, renderPage } from './page-render';
import { languageOf, PageText, textFor } from './page-text';
import { DIAL_PLAIN, DIAL_SECRETS, FOLLOW_SECRETS, followModeOf } from './page-views';
import { PagePortal, PageSource } from './page-source';
import { confirmUser, recheckAdmin } from './portal-user-check';

const STYLESHEET = readFileSync(join(__dirname, 'page.css'));
/** How many calls of each state the page reads to find today's. */
const CALLS_PER_STATE = 200;
/** The fields of the settings form shown back after a refused post (never one holding a secret). */
const SETTINGS_ENTERED = [
  'defaultUserId',
  'defaultCountry',
  'missedCallTask',
  'lineNumber',
  'DIAL_MODE',
  ...DIAL_PLAIN,
];
/** The fields of the PBX-events form shown back likewise (its addresses hold passwords: never). */
const FOLLOW_ENTERED = ['PBX_EVENTS', 'PBX_TRUNKS'];
/** The PBX-events modes the form offers: AMI, AMI with the CDR ledger, the event socket, the ledger alone. */
const FOLLOW_MODES = ['ami', 'ami+cdr', 'esl', 'cdr'];
/** Portals remembered for their limits; the least recent are forgotten first (and start full again). */
const PORTALS_KEPT = 10_000;
/**
 * Entries (`POST /app`) the portal did not confirm (each cost the portal a request): 5, then one a minute,
 * per source address, and 10, then one every 30 s, per portal. A confirmed entry gives its credit back, so
 * users who open the page (many behind one office address) are never limited; a forger is, after a handful.
 */
const ENTRY_SOURCE_BURST = 5;
const ENTRY_SOURCE_REFILL_MS = 60_000;
const ENTRY_PORTAL_BURST = 10;
const ENTRY_PORTAL_REFILL_MS = 30_000;
const SOURCES_KEPT = 10_000;
/**
 * "Test connection" (dial and PBX events), each a login at the portal's PBX: 10, then one every 6 s (10 a
 * minute), per portal; a test refused by the settings' own check before any login is not counted.
 */
const TESTS_BURST = 10;
const TESTS_REFILL_MS = 6_000;

/**
 * `GET|POST /app` (the application's page in the portal's frame): the portal's form post, confirmed with the
 * portal itself (within its request budget and per-address and per-portal limits), opens a sealed session
 * carried in a hidden field of every form (no cookies, never in an address), bound to the portal's install
 * and re-confirmed with the portal every few minutes; every change is an administrator's, checked on the
 * server, and one audit line. See docs/decisions/app-page.md.
 */
@Controller('app')
export class AppPageController {
  private readonly logger = new Logger('AppPage');
  private readonly sessions: PageSessions;
  private readonly adminDigests: Buffer[];
  private readonly entrySources = new LRUCache<string, TokenBucket>({ max: SOURCES_KEPT });
  private readonly entryPortals = new LRUCache<string, TokenBucket>({ max: PORTALS_KEPT });
  private readonly testPortals = new LRUCache<string, TokenBucket>({ max: PORTALS_KEPT });
  /** Sessions whose administrator the portal could not be asked about now: viewers for this one page. */
  private readonly unconfirmed = new WeakSet<PageSession>();

  constructor(
    private readonly source: PageSource,
    private readonly calls: CallStore,
    private readonly signal: WorkSignal,
    private readonly delivery: DeliverySettings,
    private readonly config: AppConfig,
    private readonly dialTest: DialTest,
    private readonly followTest: FollowTest,
    @Inject(PORTAL_ID) private readonly portalId: string,
  ) {
    // OAuth modes sign with a key derived from the client secret, webhook mode from ADMIN_TOKEN: every
    // replica has the same, nobody outside the deployment does.
    const secret = config.authMode === 'oauth' ? config.B24_CLIENT_SECRET : config.ADMIN_TOKEN;
    this.sessions = new PageSessions(secret, Date.now, config.APP_PAGE_RECHECK_SEC * 1000);
    this.adminDigests = digestsOf(config.ADMIN_TOKEN);
  }

  @Get('page.css')
  stylesheet(@Res() response: Response): void {
    response.setHeader('Content-Type', 'text/css; charset=utf-8');
    response.setHeader('Cache-Control', 'public, max-age=300');
    response.send(STYLESHEET);
  }

  @Get()
  async enterByGet(@Req() request: Request, @Res() response: Response): Promise<void> {
    await this.enter(request, response);
  }

  @Post()
  @HttpCode(HttpStatus.OK)
  async enterByPost(@Req() request: Request, @Res() response: Response): Promise<void> {
    await this.enter(request, response);
  }

  /**
   * The page's old addresses carried the session (`/app/s/<session>…`), and ingress and proxy logs keep
   * addresses: none is accepted any more, whatever it holds.
   */
  @All(['s', 's/*path'])
  oldAddress(@Req() request: Request, @Res() response: Response): void {
    const lang = languageOf(request.query.LANG);
    this.headers(response, undefined);
    response.status(HttpStatus.GONE).send(messagePage(textFor(lang), lang, textFor(lang).oldAddress));
  }

  /** "Read again": the page once more, its session from the form. */
  @Post('view')
  @HttpCode(HttpStatus.OK)
  async show(@Req() request: Request, @Res() response: Response) {
    const session = await this.sessionOr401(request, response);
    if (!session) return;
    await this.render(response, session, {});
  }

  @Post('settings')
  @HttpCode(HttpStatus.OK)
  async saveSettings(@Req() request: Request, @Res() response: Response) {
    const session = await this.adminOr403(request, response);
    if (!session) return;
    const form = formOf(request);
    const settings = await this.source.settings(session.portalId);
    if (!settings.editable) return this.refuse(response, session, HttpStatus.FORBIDDEN, 'settingsFromEnv');
    const patch = await this.patchOf(session.portalId, form);
    const outcome = await this.source.updateSettings(session.portalId, patch);
    if ('errors' in outcome) {
      response.status(HttpStatus.BAD_REQUEST);
      return this.render(response, session, {
        errors: errorsByField(outcome.errors),
        entered: enteredOf(form, SETTINGS_ENTERED),
      });
    }
    // A save that changed nothing (the same values again) is no change: no audit line.
    if (outcome.changed.length) {
      this.audit(
        session,
        'settings',
        { changed: outcome.changed },
        `changed settings: ${outcome.changed.join(', ')}`,
      );
    }
    await this.done(response, session, 'saved');
  }

  /** The PBX-events form: its own `follow` patch, checked and stored as `PATCH /v1/admin/portals` does. */
  @Post('follow')
  @HttpCode(HttpStatus.OK)
  async saveFollow(@Req() request: Request, @Res() response: Response) {
    const session = await this.adminOr403(request, response);
    if (!session) return;
    const form = formOf(request);
    const settings = await this.source.settings(session.portalId);
    if (!settings.editable) return this.refuse(response, session, HttpStatus.FORBIDDEN, 'settingsFromEnv');
    const follow = await this.followOf(session.portalId, form);
    const outcome =
      'problems' in follow
        ? { errors: follow.problems }
        : await this.source.updateSettings(session.portalId, { follow: follow.follow });
    if ('errors' in outcome) {
      response.status(HttpStatus.BAD_REQUEST);
      return this.render(response, session, {
        errors: errorsByField(outcome.errors),
        entered: enteredOf(form, FOLLOW_ENTERED, 'follow.'),
      });
    }
    // A save that changed nothing (the same values again) is no change: no audit line.
    if (outcome.changed.length) {
      this.audit(
        session,
        'settings',
        { changed: outcome.changed },
        `changed settings: ${outcome.changed.join(', ')}`,
      );
    }
    await this.done(response, session, 'saved');
  }

  /**
   * "Test connection" of the PBX-events form: the settings typed (an empty address: the stored one), checked
   * as the admin API checks them, then each address connected to and logged in, within 5 s; nothing stored.
   */
  @Post('test-follow')
  @HttpCode(HttpStatus.OK)
  async testFollow(@Req() request: Request, @Res() response: Response) {
    const session = await this.adminOr403(request, response);
    if (!session) return;
    const form = formOf(request);
    const entered = enteredOf(form, FOLLOW_ENTERED, 'follow.');
    const settings = await this.source.settings(session.portalId);
    if (!settings.editable) return this.refuse(response, session, HttpStatus.FORBIDDEN, 'settingsFromEnv');
    const follow = await this.followOf(session.portalId, form);
    const checked =
      'problems' in follow
        ? { errors: follow.problems }
        : follow.follow
          ? this.source.checkSettings({ follow: follow.follow })
          : { errors: [{ field: 'follow', problems: ['PBX_EVENTS: off, nothing to test'] }] };
    if ('errors' in checked) {
      response.status(HttpStatus.BAD_REQUEST);
      return this.render(response, session, { errors: errorsByField(checked.errors), entered });
    }
    if (!(await this.testAdmitted(response, session, entered))) return;
    const results = await this.followTest.test(checked.patch.follow as Record<string, string>);
    const summary = Object.entries(results)
      .map(([name, outcome]) => `${name} ${outcome.ok ? 'ok' : 'failed'}`)
      .join(', ');
    this.audit(
      session,
      'follow-test',
      { results: Object.fromEntries(Object.entries(results).map(([name, outcome]) => [name, outcome.ok])) },
      `tested the PBX-events connection (${summary})`,
    );
    await this.render(response, session, { followTests: results, entered });
  }

  @Post('test-dial')
  @HttpCode(HttpStatus.OK)
  async testDial(@Req() request: Request, @Res() response: Response) {
    const session = await this.adminOr403(request, response);
    if (!session) return;
    const form = formOf(request);
    const patch = await this.patchOf(session.portalId, form);
    const dial = patch.dial as Record<string, string> | null;
    const entered = enteredOf(form, SETTINGS_ENTERED);
    if (!dial) {
      return this.render(response, session, { testResult: { ok: false, reason: 'DIAL_MODE: off' }, entered });
    }
    if (!(await this.testAdmitted(response, session, entered))) return;
    const outcome = await this.dialTest.test(dial);
    if ('problems' in outcome) {
      response.status(HttpStatus.BAD_REQUEST);
      return this.render(response, session, { errors: { dial: outcome.problems }, entered });
    }
    this.audit(
      session,
      'dial-test',
      { ok: outcome.ok },
      `tested the dial connection (${outcome.ok ? 'ok' : 'failed'})`,
    );
    await this.render(response, session, { testResult: outcome, entered });
  }

  @Post('tokens')
  @HttpCode(HttpStatus.OK)
  async createToken(@Req() request: Request, @Res() response: Response) {
    const session = await this.adminOr403(request, response);
    if (!session) return;
    const label =
      String(formOf(request).label ?? '')
        .trim()
        .slice(0, 100) || undefined;
    const created = await this.source.createToken(session.portalId, label);
    if (!created) return this.refuse(response, session, HttpStatus.NOT_FOUND, 'unknownPortal');
    this.audit(
      session,
      'pbx-token-created',
      { tokenId: created.id },
      `created PBX token ${created.id}${label ? ` labelled ${JSON.stringify(label)}` : ''}`,
    );
    // Shown in this answer only: it is stored as a digest, nobody can show it again.
    response.setHeader('Cache-Control', 'no-store');
    await this.render(response, session, { newToken: created.token });
  }

  @Post('tokens/:id/revoke')
  @HttpCode(HttpStatus.OK)
  async revokeToken(@Param('id') id: string, @Req() request: Request, @Res() response: Response) {
    const session = await this.adminOr403(request, response);
    if (!session) return;
    // A token already gone (revoked in another tab) changes nothing: no audit line for it.
    if (await this.source.revokeToken(session.portalId, id.slice(0, 100))) {
      this.audit(
        session,
        'pbx-token-revoked',
        { tokenId: id.slice(0, 100) },
        `revoked PBX token ${id.slice(0, 100)}`,
      );
    }
    await this.done(response, session, 'revoked');
  }

  @Post('calls/:callId/requeue')
  @HttpCode(HttpStatus.OK)
  async requeueCall(@Param('callId') callId: string, @Req() request: Request, @Res() response: Response) {
    const session = await this.adminOr403(request, response);
    if (!session) return;
    if ((await requeueCalls(this.requeueDeps(), session.portalId, [callId])).requeued) {
      this.audit(
        session,
        'call-requeued',
        { callId: callId.slice(0, 128) },
        `re-queued call ${callId.slice(0, 128)}`,
      );
    }
    await this.done(response, session, 'requeued');
  }

  @Post('calls/requeue-failed')
  @HttpCode(HttpStatus.OK)
  async requeueFailed(@Req() request: Request, @Res() response: Response) {
    const session = await this.adminOr403(request, response);
    if (!session) return;
    const done = await requeueAllFailed(this.requeueDeps(), session.portalId);
    if (done) this.audit(session, 'calls-requeued', { requeued: done }, `re-queued ${done} failed calls`);
    await this.done(response, session, 'requeued');
  }

  /**
   * The portal's form post (multi, OAuth) or the admin token's sign-in (webhook mode). Anyone can post it,
   * and each post costs the portal two requests: limited per source address and per portal (429 naming
   * which, with Retry-After), and those requests wait for the portal's request budget.
   */
  private async enter(request: Request, response: Response): Promise<void> {
    const form = { ...(request.query as Record<string, unknown>), ...formOf(request) };
    const lang = languageOf(form.LANG);
    const text = textFor(lang);
    if (!this.sessions.enabled) {
      // Without B24_CLIENT_SECRET (OAuth) or ADMIN_TOKEN (webhook mode) no session could be trusted.
      this.headers(response, undefined);
      response.status(HttpStatus.SERVICE_UNAVAILABLE).send(messagePage(text, lang, text.notEnabled));
      return;
    }
    if (this.config.authMode === 'webhook') return this.enterWithAdminToken(request, response, form, lang);
    const portalId = this.config.B24_APP_MODE === 'multi' ? String(form.member_id ?? '') : this.portalId;
    const authId = typeof form.AUTH_ID === 'string' ? form.AUTH_ID : '';
    const portal = PORTAL_ID_PATTERN.test(portalId) ? await this.source.portal(portalId) : undefined;
    // One portal with OAuth: the post must name the member_id the install stored (a portal's post always does).
    const otherPortal = portal?.memberId !== undefined && form.member_id !== portal.memberId;
    if (otherPortal) {
      this.logger.warn(`app page: a post naming another member_id than portal ${portalId}'s; refused`);
    }
    if (!portal || !portal.active || otherPortal) {
      this.headers(response, undefined);
      response.status(HttpStatus.NOT_FOUND).send(messagePage(text, lang, text.unknownPortal));
      return;
    }
    if (!authId) return this.refuseEntry(response, portal, lang);
    const credit = this.entryCredit(request, response, portal, lang);
    if (!credit) return;
    this.headers(response, portal.clientEndpoint, portal.domain);
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
    await this.render(response, opened!, {});
  }

  private refuseEntry(response: Response, portal: PagePortal, lang: string): void {
    this.logger.warn(`app page: portal ${portal.portalId} did not confirm the posted AUTH_ID; refused`);
    this.headers(response, portal.clientEndpoint, portal.domain);
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
    const address = request.ip ?? request.socket.remoteAddress ?? 'unknown';
    const source = bucketOf(this.entrySources, address, ENTRY_SOURCE_BURST, ENTRY_SOURCE_REFILL_MS);
    const own = portal
      ? bucketOf(this.entryPortals, portal.portalId, ENTRY_PORTAL_BURST, ENTRY_PORTAL_REFILL_MS)
      : undefined;
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
    this.headers(response, portal?.clientEndpoint, portal?.domain);
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

  private async enterWithAdminToken(
    request: Request,
    response: Response,
    form: Record<string, unknown>,
    lang: string,
  ): Promise<void> {
    const text = textFor(lang);
    this.headers(response, this.config.B24_WEBHOOK_URL);
    const signIn = `<form method="post" action="/app"><input type="hidden" name="LANG" value="${esc(lang)}"><div class="field"><label for="token">${esc(text.adminToken)}</label><input id="token" name="token" type="password" autocomplete="current-password" required></div><button type="submit">${esc(text.signIn)}</button></form>`;
    const token = typeof form.token === 'string' ? form.token : '';
    if (request.method !== 'POST' || !token) {
      response.status(HttpStatus.OK).send(messagePage(text, lang, text.signInPrompt, signIn));
      return;
    }
    const credit = this.entryCredit(request, response, undefined, lang);
    if (!credit) return;
    if (!this.adminDigests.length || !matchesAny(token, this.adminDigests)) {
      this.logger.warn('app page: a wrong admin token was posted; refused');
      response.status(HttpStatus.UNAUTHORIZED).send(messagePage(text, lang, text.refused, signIn));
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
    await this.render(response, opened!, {});
  }

  private async render(
    response: Response,
    session: PageSession,
    extra: Partial<
      Pick<PageModel, 'notice' | 'errors' | 'entered' | 'newToken' | 'testResult' | 'followTests'>
    >,
  ): Promise<void> {
    const portal = await this.source.portal(session.portalId);
    if (!portal) return this.refuse(response, session, HttpStatus.NOT_FOUND, 'unknownPortal');
    const [connection, employees, tokens, settings, calls] = await Promise.all([
      this.source.connection(session.portalId),
      this.source.employees(session.portalId),
      this.source.tokens(session.portalId),
      this.source.settings(session.portalId),
      this.todaysCalls(session.portalId),
    ]);
    const known = new Set((employees ?? []).map((employee) => employee.extension).filter(Boolean));
    const unmatched = [
      ...new Set(calls.map((call) => call.extension).filter((ext): ext is string => Boolean(ext))),
    ].filter((extension) => employees && !known.has(extension));
    const model: PageModel = {
      text: textFor(session.lang),
      lang: session.lang,
      session: this.sessions.renew(session),
      portal: { portalId: portal.portalId, domain: portal.domain },
      user: { userId: session.userId, name: '', admin: session.admin },
      connection,
      calls,
      employees,
      unmatched,
      tokens,
      settings,
      errors: {},
      ...extra,
    };
    this.headers(response, portal.clientEndpoint, portal.domain);
    response.send(renderPage(model));
  }

  private async todaysCalls(portalId: string): Promise<PageCall[]> {
    const midnight = new Date();
    midnight.setUTCHours(0, 0, 0, 0);
    const states: [CallRecord['state'], PageCall['state']][] = [
      ['failed', 'failed'],
      ['queued', 'waiting'],
      ['registered', 'waiting'],
      ['finished', 'delivered'],
    ];
    const lists = await Promise.all(
      states.map(async ([state, shown]) =>
        (await this.calls.listCalls(portalId, state, CALLS_PER_STATE))
          .filter((call) => call.createdAt >= midnight.getTime())
          .map((call): PageCall => ({
            callId: call.callId,
            state: shown,
            attempts: call.attempts,
            lastError: call.lastError ?? null,
            extension: call.extension,
          })),
      ),
    );
    return lists.flat();
  }

  private requeueDeps(): RequeueDeps {
    const { calls, signal, delivery } = this;
    return { calls, signal, holdEndedWithoutStartMs: delivery.holdEndedWithoutStartMs };
  }

  /**
   * The settings form as the admin API's patch: an empty choice is `null` (back to the deployment's), a
   * number stays a text when it is not one (so the same validation names it); a dial address left empty keeps
   * the stored one of the same mode (addresses hold passwords and are never shown back).
   */
  private async patchOf(portalId: string, form: Record<string, unknown>): Promise<Record<string, unknown>> {
    const text = (name: string) => (typeof form[name] === 'string' ? (form[name] as string).trim() : '');
    const userId = text('defaultUserId');
    const task = text('missedCallTask');
    const mode = text('DIAL_MODE');
    const patch: Record<string, unknown> = {
      defaultUserId: userId === '' ? null : /^\d{1,9}$/.test(userId) ? Number(userId) : userId,
      defaultCountry: text('defaultCountry') === '' ? null : text('defaultCountry'),
      missedCallTask: task === '' ? null : task === 'on' ? true : task === 'off' ? false : task,
    };
    // A form of an older page has no line field: it leaves the line as it is.
    if ('lineNumber' in form) patch.lineNumber = text('lineNumber') === '' ? null : text('lineNumber');
    if (mode === '') {
      patch.dial = null;
      return patch;
    }
    const stored = await this.source.storedDial(portalId);
    const dial: Record<string, string> =
      stored && stored.DIAL_MODE === mode ? { ...stored } : { DIAL_MODE: mode };
    for (const name of DIAL_SECRETS) if (text(name)) dial[name] = text(name);
    // Plain settings are shown in their fields: an empty one is the deployment's default.
    for (const name of DIAL_PLAIN) {
      if (text(name)) dial[name] = text(name);
      else if (name in form) delete dial[name];
    }
    patch.dial = dial;
    return patch;
  }

  /**
   * The PBX-events form as the admin API's `follow` setting: the mode (empty: `null`, not followed), the
   * trunks as typed, and each address the mode needs as typed, or else the stored one (addresses hold
   * passwords and are never shown back). Problems of the form itself (an address the mode needs is neither
   * typed nor stored for the ledger alone, where the admin API would store an empty setting) are named here;
   * everything else is the admin API's check.
   */
  private async followOf(
    portalId: string,
    form: Record<string, unknown>,
  ): Promise<{ follow: Record<string, string> | null } | { problems: SettingProblem[] }> {
    const text = (name: string) => (typeof form[name] === 'string' ? (form[name] as string).trim() : '');
    const mode = text('PBX_EVENTS');
    if (mode === '') return { follow: null };
    const stored = (await this.source.storedFollow(portalId)) ?? {};
    const [events, ledger] = mode === 'cdr' ? ['', 'cdr'] : mode.split('+');
    if (!FOLLOW_MODES.includes(mode) && mode !== followModeOf(stored)) {
      return {
        problems: [{ field: 'follow', problems: [`PBX_EVENTS: not one of ${FOLLOW_MODES.join(', ')}`] }],
      };
    }
    const follow: Record<string, string> = { PBX_EVENTS: events };
    const address = (name: (typeof FOLLOW_SECRETS)[number]) => {
      const value = text(name) || stored[name];
      if (value) follow[name] = value;
    };
    if (events === 'ami') address('AMI_URL');
    if (events === 'esl') address('ESL_URL');
    if (ledger === 'cdr') address('ASTERISK_CDR_URL');
    if (text('PBX_TRUNKS')) follow.PBX_TRUNKS = text('PBX_TRUNKS');
    if (ledger === 'cdr' && !follow.ASTERISK_CDR_URL) {
      return {
        problems: [{ field: 'follow', problems: ['follow.ASTERISK_CDR_URL: required for the CDR ledger'] }],
      };
    }
    return { follow };
  }

  /**
   * The session of the posted form (`session`, a hidden field), when it is still good: sealed here, not
   * expired, its portal active under the same install (an uninstall or a reinstall ends every session), and
   * its user confirmed by the portal within SESSION_RECHECK_MS (else the portal is asked `user.admin` again,
   * within its request budget: a user it no longer takes ends the session, one no longer an administrator
   * goes on as a viewer). Otherwise 401, and nothing is done.
   */
  private async sessionOr401(request: Request, response: Response): Promise<PageSession | undefined> {
    const verified = this.sessions.verify(formOf(request).session);
    const lang = verified?.lang ?? languageOf(request.query.LANG);
    const text = textFor(lang);
    const portal = verified ? await this.source.portal(verified.portalId) : undefined;
    const current =
      verified && portal?.active === true && verified.install === installDigest(portal.installation);
    if (!verified || !portal || !current) {
      if (verified) {
        this.logger.warn(
          `app page: a session of portal ${verified.portalId} (user ${verified.userId}) after its portal's uninstall or reinstall; refused`,
        );
      }
      this.headers(response, portal?.clientEndpoint, portal?.domain);
      response
        .status(HttpStatus.UNAUTHORIZED)
        .send(messagePage(text, lang, verified ? text.ended : text.expired));
      return undefined;
    }
    if (!this.sessions.recheckDue(verified) || !verified.auth) return verified;
    const admin = await recheckAdmin(
      portal.clientEndpoint,
      verified.auth,
      this.config.B24_TIMEOUT_MS,
      await this.source.budget(portal.portalId),
    );
    if (admin === 'refused') {
      this.logger.warn(
        `app page: portal ${portal.portalId} no longer confirms user ${verified.userId}; session ended`,
      );
      this.headers(response, portal.clientEndpoint, portal.domain);
      response.status(HttpStatus.UNAUTHORIZED).send(messagePage(text, lang, text.ended));
      return undefined;
    }
    // Not asked now (an outage, no budget): a viewer for this page, asked again on the next.
    if (admin === 'unreachable') {
      const viewer = { ...verified, admin: false };
      this.unconfirmed.add(viewer);
      return viewer;
    }
    if (verified.admin && !admin) {
      this.logger.warn(
        `app page: user ${verified.userId} of portal ${portal.portalId} is no longer an administrator`,
      );
    }
    return this.sessions.rechecked(verified, admin);
  }

  /** The session, when it is an administrator's: the server refuses a change, not only the page. */
  private async adminOr403(request: Request, response: Response): Promise<PageSession | undefined> {
    const session = await this.sessionOr401(request, response);
    if (!session) return undefined;
    if (session.admin) return session;
    const unconfirmed = this.unconfirmed.has(session);
    this.logger.warn(
      `app page: user ${session.userId} of portal ${session.portalId} is no administrator${unconfirmed ? ' (the portal could not be asked)' : ''}; change refused`,
    );
    await this.refuse(
      response,
      session,
      unconfirmed ? HttpStatus.SERVICE_UNAVAILABLE : HttpStatus.FORBIDDEN,
      unconfirmed ? 'recheckFailed' : 'forbidden',
    );
    return undefined;
  }

  /**
   * "Test connection" (dial or PBX events) is limited per portal: each one logs in to the portal's PBX.
   * Past the limit the page says so (429, Retry-After) and nothing is tested.
   */
  private async testAdmitted(
    response: Response,
    session: PageSession,
    entered: Record<string, string>,
  ): Promise<boolean> {
    const waitSec = bucketOf(this.testPortals, session.portalId, TESTS_BURST, TESTS_REFILL_MS).take();
    if (waitSec === 0) return true;
    const text = textFor(session.lang);
    this.logger.warn(`app page: too many connection tests for portal ${session.portalId}; refused`);
    response.setHeader('Retry-After', String(waitSec));
    response.status(HttpStatus.TOO_MANY_REQUESTS);
    await this.render(response, session, {
      notice: `${text.tooManyTests}: ${text.retryIn.replace('{s}', String(waitSec))}`,
      entered,
    });
    return false;
  }

  private async refuse(
    response: Response,
    session: PageSession,
    status: HttpStatus,
    key: keyof PageText,
  ): Promise<void> {
    const portal = await this.source.portal(session.portalId);
    this.headers(response, portal?.clientEndpoint, portal?.domain);
    const text = textFor(session.lang);
    response.status(status).send(messagePage(text, session.lang, text[key]));
  }

  /**
   * The page after a change, with its notice: answered to the post itself (the session never goes into a
   * redirect's address).
   */
  private async done(response: Response, session: PageSession, done: 'saved' | 'requeued' | 'revoked') {
    await this.render(response, session, { notice: textFor(session.lang)[done] });
  }

  /**
   * One line per change: the portal, the user, what changed (setting names, token ids, call ids; never a value
   * that may be a secret), as fields in JSON (`audit` names the kind of change) and in the message.
   */
  private audit(session: PageSession, kind: string, details: Record<string, unknown>, what: string): void {
    this.logger.log(
      { audit: kind, portalId: session.portalId, userId: session.userId, ...details },
      `audit: portal ${session.portalId} user ${session.userId} ${what}`,
    );
  }

  /**
   * Strict CSP: nothing but the bridge's own stylesheet, forms posting only here, framed only by the portal's
   * own origin (the endpoint its verified install named, and its domain).
   */
  private headers(response: Response, endpoint: string | undefined, domain?: string): void {
    response.setHeader('Content-Type', 'text/html; charset=utf-8');
    response.setHeader('Cache-Control', 'no-store');
    response.setHeader('Referrer-Policy', 'no-referrer');
    response.setHeader('X-Content-Type-Options', 'nosniff');
    response.setHeader(
      'Content-Security-Policy',
      `default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors ${frameAncestors(endpoint, domain)}`,
    );
  }
}

/** The portal's own origin as CSP sources, or `'none'` when no portal is known. */
export function frameAncestors(endpoint: string | undefined, domain?: string): string {
  const sources = new Set<string>();
  try {
    if (endpoint) sources.add(new URL(endpoint).origin);
  } catch {
    // no origin from a malformed address
  }
  // The domain as a host source (the bridge's scheme): only a plain host name with an optional port.
  if (domain && /^[a-z0-9.-]{1,253}(:\d{1,5})?$/i.test(domain)) sources.add(domain.toLowerCase());
  return sources.size ? [...sources].join(' ') : "'none'";
}

/** The bucket of `key`, made full when first needed. */
function bucketOf(
  buckets: LRUCache<string, TokenBucket>,
  key: string,
  burst: number,
  refillMs: number,
): TokenBucket {
  let bucket = buckets.get(key);
  if (!bucket) {
    bucket = new TokenBucket(burst, refillMs);
    buckets.set(key, bucket);
  }
  return bucket;
}

function formOf(request: Request): Record<string, unknown> {
  const body: unknown = request.body;
  return typeof body === 'object' && body !== null && !Array.isArray(body)
    ? (body as Record<string, unknown>)
    : {};
}

/** The fields of a refused post shown again (`prefix`: the form's, `follow.`), never one holding a secret. */
function enteredOf(form: Record<string, unknown>, names: string[], prefix = ''): Record<string, string> {
  const entered: Record<string, string> = {};
  for (const name of names) {
    if (typeof form[name] === 'string') entered[`${prefix}${name}`] = (form[name] as string).slice(0, 200);
  }
  return entered;
}

/**
 * Problems by the field they concern: `dial.AMI_URL: …` goes beside the dial form's AMI_URL, `follow.AMI_URL:
 * …` beside the PBX-events form's, the rest of each beside its mode.
 */
function errorsByField(problems: SettingProblem[]): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  for (const { field, problems: messages } of problems) {
    for (const message of messages) {
      const named = /^(dial|follow)\.([A-Z][A-Z0-9_]*)\b/.exec(message);
      const key = (field === 'dial' || field === 'follow') && named ? `${named[1]}.${named[2]}` : field;
      (errors[key] ??= []).push(message);
    }
  }
  return errors;
}
