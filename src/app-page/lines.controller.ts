import { Controller, HttpCode, HttpStatus, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { normaliseLine } from '../common/line-number';
import { formOf } from './app-page-form';
import { LineFormErrors } from './lines-render';
import { lineErrorsOf, linesWith, ruleOf } from './lines-view';
import { PageGate } from './page-gate';
import { PageResponder } from './page-responder';
import { PageSession } from './page-session';
import { PageSource } from './page-source';
import { SetupPages } from './setup-pages';
import { setupTextFor } from './setup-text';

/** The fields of a line form shown again after a refused post. */
const LINE_FIELDS = ['name', 'crmCreate', 'crmSource', 'defaultUserId', 'report', 'missedCallTask'];

/**
 * A line's rules from the page (`POST /app/lines`): the portal's `lines` setting with that line's rule
 * replaced (or added), checked and stored as `PATCH /v1/admin/portals` does; a refused rule is a 400 with
 * each problem (naming the line and the field) beside its field. Answered on the overview, or on the guided
 * setup's lines step when the form came from there.
 */
@Controller('app')
export class LinesController {
  constructor(
    private readonly gate: PageGate,
    private readonly responder: PageResponder,
    private readonly source: PageSource,
    private readonly pages: SetupPages,
  ) {}

  @Post('lines')
  @HttpCode(HttpStatus.OK)
  async saveLine(@Req() request: Request, @Res() response: Response) {
    const session = await this.gate.editorOr403(request, response);
    if (!session) return;
    const form = formOf(request);
    const fromSetup = form.from === 'setup';
    const posted = typeof form.number === 'string' ? form.number.trim() : '';
    const number = normaliseLine(posted) ?? posted.slice(0, 60);
    const entered: Record<string, string> = {};
    for (const name of LINE_FIELDS) {
      if (typeof form[name] === 'string') entered[name] = (form[name] as string).slice(0, 200);
    }
    const stored = (await this.source.settings(session.portalId)).lines;
    const { lines, index } = linesWith(stored, ruleOf(number, form));
    const outcome = await this.source.updateSettings(session.portalId, { lines });
    if ('errors' in outcome) {
      const problems = outcome.errors.flatMap((error) =>
        error.field === 'lines' ? error.problems : error.problems.map((text) => `${error.field}: ${text}`),
      );
      const refused: LineFormErrors = { number, errors: lineErrorsOf(problems, index), entered };
      response.status(HttpStatus.BAD_REQUEST);
      return this.answer(response, session, fromSetup, { refused, status: HttpStatus.BAD_REQUEST });
    }
    if (outcome.changed.length) {
      this.responder.audit(
        session,
        'settings',
        { changed: outcome.changed, line: number },
        `changed the rules of line ${number}`,
      );
    }
    await this.answer(response, session, fromSetup, { notice: setupTextFor(session.lang).lineSaved });
  }

  private answer(
    response: Response,
    session: PageSession,
    fromSetup: boolean,
    options: { refused?: LineFormErrors; notice?: string; status?: HttpStatus },
  ): Promise<void> {
    if (fromSetup) return this.pages.lines(response, session, options);
    return this.responder.render(response, session, {
      lineRefused: options.refused,
      notice: options.notice,
    });
  }
}
