import { All, Controller, Get, HttpCode, HttpStatus, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PageEntry } from './page-entry';
import { PageGate } from './page-gate';
import { PageResponder } from './page-responder';
import { messagePage } from './page-render';
import { languageOf, textFor } from './page-text';

const STYLESHEET = readFileSync(join(__dirname, 'page.css'));

/**
 * `GET|POST /app` (the application's page in the portal's frame): the portal's form post, confirmed with the
 * portal itself (within its request budget and per-address and per-portal limits), opens a sealed session
 * carried in a hidden field of every form (no cookies, never in an address), bound to the portal's install
 * and re-confirmed with the portal every few minutes; every change is an administrator's, checked on the
 * server, and one audit line. See docs/decisions/app-page.md.
 */
@Controller('app')
export class AppPageController {
  constructor(
    private readonly entry: PageEntry,
    private readonly gate: PageGate,
    private readonly responder: PageResponder,
  ) {}

  @Get('page.css')
  stylesheet(@Res() response: Response): void {
    response.setHeader('Content-Type', 'text/css; charset=utf-8');
    response.setHeader('Cache-Control', 'public, max-age=300');
    response.send(STYLESHEET);
  }

  @Get()
  async enterByGet(@Req() request: Request, @Res() response: Response): Promise<void> {
    await this.entry.enter(request, response);
  }

  @Post()
  @HttpCode(HttpStatus.OK)
  async enterByPost(@Req() request: Request, @Res() response: Response): Promise<void> {
    await this.entry.enter(request, response);
  }

  /**
   * The page's old addresses carried the session (`/app/s/<session>…`), and ingress and proxy logs keep
   * addresses: none is accepted any more, whatever it holds.
   */
  @All(['s', 's/*path'])
  oldAddress(@Req() request: Request, @Res() response: Response): void {
    const lang = languageOf(request.query.LANG);
    this.responder.headers(response, undefined);
    response.status(HttpStatus.GONE).send(messagePage(textFor(lang), lang, textFor(lang).oldAddress));
  }

  /** "Read again": the page once more, its session from the form. */
  @Post('view')
  @HttpCode(HttpStatus.OK)
  async show(@Req() request: Request, @Res() response: Response) {
    const session = await this.gate.sessionOr401(request, response);
    if (!session) return;
    await this.responder.render(response, session, {});
  }
}
