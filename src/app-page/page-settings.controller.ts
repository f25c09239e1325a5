import { Controller, HttpCode, HttpStatus, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { formOf } from './app-page-form';
import { PageGate } from './page-gate';
import { PageResponder } from './page-responder';
import { PageSession } from './page-session';
import { PageSource } from './page-source';
import {
  enteredOf,
  errorsByField,
  FOLLOW_ENTERED,
  followOf,
  SETTINGS_ENTERED,
  settingsPatchOf,
} from './settings-form';

/** The page's settings forms (`/app/settings`, `/app/follow`): checked and stored as the admin API does. */
@Controller('app')
export class PageSettingsController {
  constructor(
    private readonly gate: PageGate,
    private readonly responder: PageResponder,
    private readonly source: PageSource,
  ) {}

  @Post('settings')
  @HttpCode(HttpStatus.OK)
  async saveSettings(@Req() request: Request, @Res() response: Response) {
    const session = await this.gate.editorOr403(request, response);
    if (!session) return;
    const form = formOf(request);
    const patch = await settingsPatchOf(this.source, session.portalId, form);
    const outcome = await this.source.updateSettings(session.portalId, patch);
    if ('errors' in outcome) {
      response.status(HttpStatus.BAD_REQUEST);
      return this.responder.render(response, session, {
        errors: errorsByField(outcome.errors),
        entered: enteredOf(form, SETTINGS_ENTERED),
      });
    }
    await this.saved(response, session, outcome.changed);
  }

  /** The PBX-events form: its own `follow` patch, checked and stored as `PATCH /v1/admin/portals` does. */
  @Post('follow')
  @HttpCode(HttpStatus.OK)
  async saveFollow(@Req() request: Request, @Res() response: Response) {
    const session = await this.gate.editorOr403(request, response);
    if (!session) return;
    const form = formOf(request);
    const follow = await followOf(this.source, session.portalId, form);
    const outcome =
      'problems' in follow
        ? { errors: follow.problems }
        : await this.source.updateSettings(session.portalId, { follow: follow.follow });
    if ('errors' in outcome) {
      response.status(HttpStatus.BAD_REQUEST);
      return this.responder.render(response, session, {
        errors: errorsByField(outcome.errors),
        entered: enteredOf(form, FOLLOW_ENTERED, 'follow.'),
      });
    }
    await this.saved(response, session, outcome.changed);
  }

  private async saved(response: Response, session: PageSession, changed: string[]): Promise<void> {
    // A save that changed nothing (the same values again) is no change: no audit line.
    if (changed.length) {
      this.responder.audit(session, 'settings', { changed }, `changed settings: ${changed.join(', ')}`);
    }
    await this.responder.done(response, session, 'saved');
  }
}
