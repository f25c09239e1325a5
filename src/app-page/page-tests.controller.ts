import { Controller, HttpCode, HttpStatus, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { formOf } from './app-page-form';
import { ConnectionTests } from './connection-tests';
import { PageGate } from './page-gate';
import { PageResponder } from './page-responder';
import { PageSession } from './page-session';
import { textFor } from './page-text';
import { PageSource } from './page-source';
import {
  enteredOf,
  errorsByField,
  FOLLOW_ENTERED,
  followOf,
  SETTINGS_ENTERED,
  settingsPatchOf,
} from './settings-form';

/** The settings forms' "Test connection": the settings typed, tried against the PBX, nothing stored. */
@Controller('app')
export class PageTestsController {
  constructor(
    private readonly gate: PageGate,
    private readonly tests: ConnectionTests,
    private readonly responder: PageResponder,
    private readonly source: PageSource,
  ) {}

  /**
   * "Test connection" of the PBX-events form: the settings typed (an empty address: the stored one), checked
   * as the admin API checks them, then each address connected to and logged in, within 5 s.
   */
  @Post('test-follow')
  @HttpCode(HttpStatus.OK)
  async testFollow(@Req() request: Request, @Res() response: Response) {
    const session = await this.gate.editorOr403(request, response);
    if (!session) return;
    const form = formOf(request);
    const entered = enteredOf(form, FOLLOW_ENTERED, 'follow.');
    const follow = await followOf(this.source, session.portalId, form);
    const checked =
      'problems' in follow
        ? { errors: follow.problems }
        : follow.follow
          ? this.source.checkSettings({ follow: follow.follow })
          : { errors: [{ field: 'follow', problems: ['PBX_EVENTS: off, nothing to test'] }] };
    if ('errors' in checked) {
      response.status(HttpStatus.BAD_REQUEST);
      return this.responder.render(response, session, { errors: errorsByField(checked.errors), entered });
    }
    if (!(await this.testAdmitted(response, session, entered))) return;
    const results = await this.tests.follow.test(checked.patch.follow as Record<string, string>);
    const summary = Object.entries(results)
      .map(([name, outcome]) => `${name} ${outcome.ok ? 'ok' : 'failed'}`)
      .join(', ');
    this.responder.audit(
      session,
      'follow-test',
      { results: Object.fromEntries(Object.entries(results).map(([name, outcome]) => [name, outcome.ok])) },
      `tested the PBX-events connection (${summary})`,
    );
    await this.responder.render(response, session, { followTests: results, entered });
  }

  @Post('test-dial')
  @HttpCode(HttpStatus.OK)
  async testDial(@Req() request: Request, @Res() response: Response) {
    const session = await this.gate.adminOr403(request, response);
    if (!session) return;
    const form = formOf(request);
    const patch = await settingsPatchOf(this.source, session.portalId, form);
    const dial = patch.dial as Record<string, string> | null;
    const entered = enteredOf(form, SETTINGS_ENTERED);
    if (!dial) {
      const testResult = { ok: false, reason: 'DIAL_MODE: off' };
      return this.responder.render(response, session, { testResult, entered });
    }
    if (!(await this.testAdmitted(response, session, entered))) return;
    const outcome = await this.tests.dial.test(dial);
    if ('problems' in outcome) {
      response.status(HttpStatus.BAD_REQUEST);
      return this.responder.render(response, session, { errors: { dial: outcome.problems }, entered });
    }
    this.responder.audit(
      session,
      'dial-test',
      { ok: outcome.ok },
      `tested the dial connection (${outcome.ok ? 'ok' : 'failed'})`,
    );
    await this.responder.render(response, session, { testResult: outcome, entered });
  }

  /** Past the portal's limit the page says so (429, Retry-After) and nothing is tested. */
  private async testAdmitted(
    response: Response,
    session: PageSession,
    entered: Record<string, string>,
  ): Promise<boolean> {
    const waitSec = this.tests.admit(session.portalId);
    if (waitSec === 0) return true;
    const text = textFor(session.lang);
    response.setHeader('Retry-After', String(waitSec));
    response.status(HttpStatus.TOO_MANY_REQUESTS);
    await this.responder.render(response, session, {
      notice: `${text.tooManyTests}: ${text.retryIn.replace('{s}', String(waitSec))}`,
      entered,
    });
    return false;
  }
}
