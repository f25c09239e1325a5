import { HttpStatus, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppConfig } from '../config/app-config';
import { CallStore } from '../store/call-store';
import { LineFormErrors, linesSection } from './lines-render';
import { pageLinesOf } from './lines-view';
import { PageResponder } from './page-responder';
import { PageSession, PageSessions } from './page-session';
import { textFor } from './page-text';
import { PageSource } from './page-source';
import { doneStep, linesStep, setupDocument } from './setup-render';
import { setupTextFor } from './setup-text';

/** The guided setup's answers: each step's document, with the page's headers and a fresh session. */
@Injectable()
export class SetupPages {
  constructor(
    private readonly source: PageSource,
    private readonly calls: CallStore,
    private readonly sessions: PageSessions,
    private readonly responder: PageResponder,
    private readonly config: AppConfig,
  ) {}

  async send(
    response: Response,
    session: PageSession,
    step: number,
    body: string,
    options: { status?: HttpStatus; notice?: string } = {},
  ): Promise<void> {
    const portal = await this.source.portal(session.portalId);
    if (!portal) return this.responder.refuse(response, session, HttpStatus.NOT_FOUND, 'unknownPortal');
    this.responder.headers(response, portal.clientEndpoint, portal.domain);
    const frame = {
      text: setupTextFor(session.lang),
      page: textFor(session.lang),
      lang: session.lang,
      session: this.sessions.renew(session),
      step,
      notice: options.notice,
    };
    response.status(options.status ?? HttpStatus.OK).send(setupDocument(frame, body));
  }

  /** Step 4: the lines seen, with their rules (a refused rule beside its field). */
  async lines(
    response: Response,
    session: PageSession,
    options: { refused?: LineFormErrors; notice?: string; status?: HttpStatus } = {},
  ): Promise<void> {
    const text = setupTextFor(session.lang);
    const [settings, employees] = await Promise.all([
      this.source.settings(session.portalId),
      this.source.employees(session.portalId),
    ]);
    const lines = await pageLinesOf(this.calls, session.portalId, settings.lines);
    const html = linesSection({
      text,
      lines,
      employees,
      editable: session.admin && settings.editable,
      from: 'setup',
      refused: options.refused,
    });
    await this.send(response, session, 4, linesStep(text, html), options);
  }

  /** Step 5: today's calls as they arrive. */
  async done(response: Response, session: PageSession): Promise<void> {
    const calls = await this.responder.todaysCalls(session.portalId);
    const body = doneStep(setupTextFor(session.lang), textFor(session.lang), calls);
    await this.send(response, session, 5, body);
  }

  /**
   * The bridge's address as the PBX will likely see it: the local address this page's request came in on
   * (the administrator is told to check it: behind NAT the PBX sees another).
   */
  bridgeAddress(request: Request): string {
    const local = request.socket.localAddress ?? '';
    return local.replace(/^::ffff:/, '') || '203.0.113.10';
  }

  /** The bridge's own base address, for the URLs a PBX posts to: PUBLIC_URL, else this request's. */
  baseUrl(request: Request): string {
    const base = this.config.PUBLIC_URL ?? `${request.protocol}://${request.get('host') ?? 'localhost'}`;
    return base.replace(/\/+$/, '');
  }
}
