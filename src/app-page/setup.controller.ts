import { Controller, HttpCode, HttpStatus, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ConnectionTests } from './connection-tests';
import { formOf } from './app-page-form';
import { PageGate } from './page-gate';
import { esc } from './page-render';
import { PageResponder } from './page-responder';
import { PageSession } from './page-session';
import { PageSource } from './page-source';
import {
  answerErrorsOf,
  answersOfStored,
  ANSWERS_SHOWN,
  followed,
  PbxSystem,
  settingsOfAnswers,
  systemOf,
} from './setup-answers';
import { SetupPages } from './setup-pages';
import { postingStep, questionsStep, systemChoice, testStep } from './setup-render';
import { setupTextFor } from './setup-text';

/**
 * The guided setup (docs/decisions/app-page.md, "The first hour"): which phone system; its questions in
 * words with the snippet for the PBX; the connection test in words; the lines; done, with today's calls.
 * Each step a form post carrying the session; what is stored goes through `PageSource.updateSettings`, the
 * admin API's check, under SPEC's names (PBX_EVENTS, AMI_URL, ESL_URL, ASTERISK_CDR_URL, dial).
 */
@Controller('app/setup')
export class SetupController {
  constructor(
    private readonly gate: PageGate,
    private readonly tests: ConnectionTests,
    private readonly responder: PageResponder,
    private readonly source: PageSource,
    private readonly pages: SetupPages,
  ) {}

  /** Step 1: which phone system. */
  @Post()
  @HttpCode(HttpStatus.OK)
  async start(@Req() request: Request, @Res() response: Response) {
    const session = await this.gate.adminOr403(request, response);
    if (!session) return;
    const text = setupTextFor(session.lang);
    await this.pages.send(response, session, 1, `<p>${esc(text.welcome)}</p>${systemChoice(text)}`);
  }

  /** Step 2: that system's questions (or, for a PBX that posts, the addresses to paste). */
  @Post('questions')
  @HttpCode(HttpStatus.OK)
  async questions(@Req() request: Request, @Res() response: Response) {
    const session = await this.gate.adminOr403(request, response);
    if (!session) return;
    const system = systemOf(formOf(request).system);
    if (!system) return this.unknownSystem(response, session);
    await this.step2(request, response, session, system, {});
  }

  /** The answers stored as the portal's settings (the admin API's check), then tested at once. */
  @Post('connect')
  @HttpCode(HttpStatus.OK)
  async connect(@Req() request: Request, @Res() response: Response) {
    const session = await this.gate.editorOr403(request, response);
    if (!session) return;
    const form = formOf(request);
    const system = systemOf(form.system);
    if (!system || !followed(system)) return this.unknownSystem(response, session);
    const entered: Record<string, string> = {};
    for (const name of ANSWERS_SHOWN) {
      if (typeof form[name] === 'string') entered[name] = (form[name] as string).slice(0, 200);
    }
    const stored = await this.source.storedFollow(session.portalId);
    const answers = settingsOfAnswers(system, form, stored);
    const outcome =
      'errors' in answers
        ? answers
        : await this.source
            .updateSettings(session.portalId, answers.patch)
            .then((done) => ('errors' in done ? { errors: answerErrorsOf(done.errors) } : done));
    if ('errors' in outcome) {
      return this.step2(request, response, session, system, {
        entered,
        errors: outcome.errors,
        status: HttpStatus.BAD_REQUEST,
      });
    }
    if (outcome.changed.length) {
      this.responder.audit(
        session,
        'settings',
        { changed: outcome.changed, via: 'setup' },
        `changed settings in the guided setup: ${outcome.changed.join(', ')}`,
      );
    }
    await this.test(request, response, session);
  }

  /** Step 3 again: the stored connection tested. */
  @Post('test')
  @HttpCode(HttpStatus.OK)
  async testAgain(@Req() request: Request, @Res() response: Response) {
    const session = await this.gate.editorOr403(request, response);
    if (!session) return;
    await this.test(request, response, session);
  }

  /** A PBX token made right here for the PBX's URL (shown this once). */
  @Post('token')
  @HttpCode(HttpStatus.OK)
  async token(@Req() request: Request, @Res() response: Response) {
    const session = await this.gate.adminOr403(request, response);
    if (!session) return;
    const system = systemOf(formOf(request).system);
    if (!system || followed(system)) return this.unknownSystem(response, session);
    const created = await this.source.createToken(session.portalId, `${system} (setup)`);
    if (!created) return this.responder.refuse(response, session, HttpStatus.NOT_FOUND, 'unknownPortal');
    this.responder.audit(
      session,
      'pbx-token-created',
      { tokenId: created.id, via: 'setup' },
      `created PBX token ${created.id} in the guided setup for ${system}`,
    );
    await this.step2(request, response, session, system, { newToken: created.token });
  }

  /** Step 4: the lines seen, to name and give rules. */
  @Post('lines')
  @HttpCode(HttpStatus.OK)
  async lines(@Req() request: Request, @Res() response: Response) {
    const session = await this.gate.adminOr403(request, response);
    if (!session) return;
    await this.pages.lines(response, session);
  }

  /** Step 5: done, and today's calls arriving (read again, no scripts). */
  @Post('done')
  @HttpCode(HttpStatus.OK)
  async done(@Req() request: Request, @Res() response: Response) {
    const session = await this.gate.adminOr403(request, response);
    if (!session) return;
    await this.pages.done(response, session);
  }

  private async step2(
    request: Request,
    response: Response,
    session: PageSession,
    system: PbxSystem,
    options: {
      entered?: Record<string, string>;
      errors?: Record<string, string[]>;
      status?: HttpStatus;
      newToken?: string;
    },
  ): Promise<void> {
    const text = setupTextFor(session.lang);
    const settings = await this.source.settings(session.portalId);
    const stored = await this.source.storedFollow(session.portalId);
    const body = followed(system)
      ? questionsStep({
          text,
          system,
          bridgeAddress: this.pages.bridgeAddress(request),
          entered: options.entered ?? {
            ...answersOfStored(stored),
            clickToCall: settings.dial ? 'yes' : 'no',
          },
          errors: options.errors ?? {},
          passwordStored: Boolean(system === 'freepbx' ? stored?.AMI_URL : stored?.ESL_URL),
          editable: settings.editable,
        })
      : postingStep({
          text,
          system,
          baseUrl: this.pages.baseUrl(request),
          newToken: options.newToken,
          tokens: (await this.source.tokens(session.portalId)) !== null,
          editable: settings.editable || options.newToken !== undefined,
        });
    if (options.newToken) response.setHeader('Cache-Control', 'no-store');
    await this.pages.send(response, session, 2, body, { status: options.status });
  }

  /** Step 3: the stored PBX connection logged in to (within 5 s), the outcome in words. */
  private async test(request: Request, response: Response, session: PageSession): Promise<void> {
    const text = setupTextFor(session.lang);
    const stored = await this.source.storedFollow(session.portalId);
    const system = stored?.PBX_EVENTS === 'esl' ? 'freeswitch' : 'freepbx';
    const url = system === 'freepbx' ? stored?.AMI_URL : stored?.ESL_URL;
    const target = url ? hostOf(url) : '';
    const bridgeAddress = this.pages.bridgeAddress(request);
    if (!stored || !url) {
      const body = testStep({ text, system, bridgeAddress, target, outcome: undefined });
      return this.pages.send(response, session, 3, body);
    }
    const waitSec = this.tests.admit(session.portalId);
    if (waitSec > 0) {
      response.setHeader('Retry-After', String(waitSec));
      const body = testStep({ text, system, bridgeAddress, target, outcome: undefined, limitedSec: waitSec });
      return this.pages.send(response, session, 3, body, { status: HttpStatus.TOO_MANY_REQUESTS });
    }
    const results = await this.tests.follow.test(stored);
    const name = system === 'freepbx' ? 'AMI_URL' : 'ESL_URL';
    const outcome = results[name];
    this.responder.audit(
      session,
      'follow-test',
      {
        results: Object.fromEntries(Object.entries(results).map(([key, value]) => [key, value.ok])),
        via: 'setup',
      },
      `tested the PBX connection in the guided setup (${outcome?.ok ? 'ok' : 'failed'})`,
    );
    const body = testStep({
      text,
      system,
      bridgeAddress,
      target,
      outcome,
      ledger: results.ASTERISK_CDR_URL,
    });
    await this.pages.send(response, session, 3, body);
  }

  private async unknownSystem(response: Response, session: PageSession): Promise<void> {
    const text = setupTextFor(session.lang);
    const body = `<p class="problem" role="alert">system: one of freepbx, freeswitch, 3cx, yeastar, other</p>${systemChoice(text)}`;
    await this.pages.send(response, session, 1, body, { status: HttpStatus.BAD_REQUEST });
  }
}

/** `host:port` of a PBX address, without its credentials. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}
