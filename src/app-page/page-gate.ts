import { HttpStatus, Injectable, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppConfig } from '../config/app-config';
import { formOf } from './app-page-form';
import { PageResponder } from './page-responder';
import { installDigest, PageSession, PageSessions } from './page-session';
import { messagePage } from './page-render';
import { sendPageOff } from './page-entry';
import { languageOf, textFor } from './page-text';
import { PageSource } from './page-source';
import { recheckAdmin } from './portal-user-check';

/** Who may see the page and who may change anything: the session of each form post, checked here. */
@Injectable()
export class PageGate {
  private readonly logger = new Logger('AppPage');
  /** Sessions whose administrator the portal could not be asked about now: viewers for this one page. */
  private readonly unconfirmed = new WeakSet<PageSession>();

  constructor(
    private readonly source: PageSource,
    private readonly sessions: PageSessions,
    private readonly responder: PageResponder,
    private readonly config: AppConfig,
  ) {}

  /**
   * The session of the posted form (`session`, a hidden field), when it is still good: sealed here, not
   * expired, its portal active under the same install (an uninstall or a reinstall ends every session), and
   * its user confirmed by the portal within SESSION_RECHECK_MS (else the portal is asked `user.admin` again,
   * within its request budget: a user it no longer takes ends the session, one no longer an administrator
   * goes on as a viewer). Otherwise 401, and nothing is done.
   */
  async sessionOr401(request: Request, response: Response): Promise<PageSession | undefined> {
    if (!this.sessions.enabled) {
      sendPageOff(
        response,
        this.responder,
        languageOf(request.query.LANG),
        this.config.authMode === 'webhook',
      );
      return undefined;
    }
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
      this.responder.headers(response, portal?.clientEndpoint, portal?.domain);
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
      this.responder.headers(response, portal.clientEndpoint, portal.domain);
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

  /** An administrator's session where the settings are stored with the portal (not the environment's). */
  async editorOr403(request: Request, response: Response): Promise<PageSession | undefined> {
    const session = await this.adminOr403(request, response);
    if (!session) return undefined;
    if ((await this.source.settings(session.portalId)).editable) return session;
    await this.responder.refuse(response, session, HttpStatus.FORBIDDEN, 'settingsFromEnv');
    return undefined;
  }

  /** The session, when it is an administrator's: the server refuses a change, not only the page. */
  async adminOr403(request: Request, response: Response): Promise<PageSession | undefined> {
    const session = await this.sessionOr401(request, response);
    if (!session) return undefined;
    if (session.admin) return session;
    const unconfirmed = this.unconfirmed.has(session);
    this.logger.warn(
      `app page: user ${session.userId} of portal ${session.portalId} is no administrator${unconfirmed ? ' (the portal could not be asked)' : ''}; change refused`,
    );
    await this.responder.refuse(
      response,
      session,
      unconfirmed ? HttpStatus.SERVICE_UNAVAILABLE : HttpStatus.FORBIDDEN,
      unconfirmed ? 'recheckFailed' : 'forbidden',
    );
    return undefined;
  }
}
