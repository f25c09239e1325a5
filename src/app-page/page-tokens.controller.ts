import { Controller, HttpCode, HttpStatus, Param, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { formOf } from './app-page-form';
import { PageGate } from './page-gate';
import { PageResponder } from './page-responder';
import { PageSource } from './page-source';

/** The portal's PBX tokens on the page: created (shown once) and revoked by an administrator. */
@Controller('app')
export class PageTokensController {
  constructor(
    private readonly gate: PageGate,
    private readonly responder: PageResponder,
    private readonly source: PageSource,
  ) {}

  @Post('tokens')
  @HttpCode(HttpStatus.OK)
  async createToken(@Req() request: Request, @Res() response: Response) {
    const session = await this.gate.adminOr403(request, response);
    if (!session) return;
    const label =
      String(formOf(request).label ?? '')
        .trim()
        .slice(0, 100) || undefined;
    const created = await this.source.createToken(session.portalId, label);
    if (!created) return this.responder.refuse(response, session, HttpStatus.NOT_FOUND, 'unknownPortal');
    this.responder.audit(
      session,
      'pbx-token-created',
      { tokenId: created.id },
      `created PBX token ${created.id}${label ? ` labelled ${JSON.stringify(label)}` : ''}`,
    );
    // Shown in this answer only: it is stored as a digest, nobody can show it again.
    response.setHeader('Cache-Control', 'no-store');
    await this.responder.render(response, session, { newToken: created.token });
  }

  @Post('tokens/:id/revoke')
  @HttpCode(HttpStatus.OK)
  async revokeToken(@Param('id') id: string, @Req() request: Request, @Res() response: Response) {
    const session = await this.gate.adminOr403(request, response);
    if (!session) return;
    const tokenId = id.slice(0, 100);
    // A token already gone (revoked in another tab) changes nothing: no audit line for it.
    if (await this.source.revokeToken(session.portalId, tokenId)) {
      this.responder.audit(session, 'pbx-token-revoked', { tokenId }, `revoked PBX token ${tokenId}`);
    }
    await this.responder.done(response, session, 'revoked');
  }
}
