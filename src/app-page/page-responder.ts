import { HttpStatus, Injectable, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { CallDelivery } from '../calls/call';
import { CallStore } from '../store/call-store';
import { PageSession, PageSessions } from './page-session';
import { messagePage, PageCall, PageModel, renderPage } from './page-render';
import { PageText, textFor } from './page-text';
import { PageSource } from './page-source';
import { LineFormErrors } from './lines-render';
import { overviewSections } from './overview-sections';

/** How many calls of each state the page reads to find today's. */
const CALLS_PER_STATE = 200;

/** What a page after a post shows beside the portal's state. */
export type PageExtra = Partial<
  Pick<PageModel, 'notice' | 'errors' | 'entered' | 'newToken' | 'testResult' | 'followTests'>
> & { lineRefused?: LineFormErrors };

/** The page's answers: the page itself, a message page, their headers, and the audit line of a change. */
@Injectable()
export class PageResponder {
  private readonly logger = new Logger('AppPage');

  constructor(
    private readonly source: PageSource,
    private readonly calls: CallStore,
    private readonly sessions: PageSessions,
  ) {}

  async render(response: Response, session: PageSession, extra: PageExtra): Promise<void> {
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
      sections: await overviewSections(this.calls, {
        portalId: session.portalId,
        lang: session.lang,
        admin: session.admin,
        settings,
        calls,
        employees,
        lineRefused: extra.lineRefused,
      }),
    };
    this.headers(response, portal.clientEndpoint, portal.domain);
    response.send(renderPage(model));
  }

  /**
   * The page after a change, with its notice: answered to the post itself (the session never goes into a
   * redirect's address).
   */
  async done(response: Response, session: PageSession, done: 'saved' | 'requeued' | 'revoked') {
    await this.render(response, session, { notice: textFor(session.lang)[done] });
  }

  async refuse(
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
   * One line per change: the portal, the user, what changed (setting names, token ids, call ids; never a value
   * that may be a secret), as fields in JSON (`audit` names the kind of change) and in the message.
   */
  audit(session: PageSession, kind: string, details: Record<string, unknown>, what: string): void {
    this.logger.log(
      { audit: kind, portalId: session.portalId, userId: session.userId, ...details },
      `audit: portal ${session.portalId} user ${session.userId} ${what}`,
    );
  }

  /**
   * Strict CSP: nothing but the bridge's own stylesheet, forms posting only here, framed only by the portal's
   * own origin (the endpoint its verified install named, and its domain).
   */
  headers(response: Response, endpoint: string | undefined, domain?: string): void {
    response.setHeader('Content-Type', 'text/html; charset=utf-8');
    response.setHeader('Cache-Control', 'no-store');
    response.setHeader('Referrer-Policy', 'no-referrer');
    response.setHeader('X-Content-Type-Options', 'nosniff');
    response.setHeader(
      'Content-Security-Policy',
      `default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors ${frameAncestors(endpoint, domain)}`,
    );
  }

  /** Today's calls of the portal, as the page lists them. */
  async todaysCalls(portalId: string): Promise<PageCall[]> {
    const midnight = new Date();
    midnight.setUTCHours(0, 0, 0, 0);
    const states: [CallDelivery['state'], PageCall['state']][] = [
      ['failed', 'failed'],
      ['queued', 'waiting'],
      ['registered', 'waiting'],
      ['finished', 'delivered'],
      ['ignored', 'ignored'],
    ];
    const lists = await Promise.all(
      states.map(async ([state, shown]) =>
        (await this.calls.listCalls(portalId, state, CALLS_PER_STATE))
          .filter((call) => call.createdAt >= midnight.getTime())
          .map((call): PageCall => ({
            callId: call.callId,
            state: shown,
            attempts: call.delivery.attempts,
            lastError: call.delivery.lastError ?? null,
            extension: call.party.extension,
            transcript: call.transcript?.state,
          })),
      ),
    );
    return lists.flat();
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
