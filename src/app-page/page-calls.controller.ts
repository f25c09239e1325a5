import { Controller, HttpCode, HttpStatus, Param, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { requeueAllFailed, requeueCalls, RequeueDeps } from '../admin/requeue';
import { WorkSignal } from '../common/work-signal';
import { DeliverySettings } from '../config/settings';
import { CallStore } from '../store/call-store';
import { PageGate } from './page-gate';
import { PageResponder } from './page-responder';

/** The page's failed calls, re-queued by an administrator: one, or every failed call of the portal. */
@Controller('app')
export class PageCallsController {
  constructor(
    private readonly gate: PageGate,
    private readonly responder: PageResponder,
    private readonly calls: CallStore,
    private readonly signal: WorkSignal,
    private readonly delivery: DeliverySettings,
  ) {}

  @Post('calls/:callId/requeue')
  @HttpCode(HttpStatus.OK)
  async requeueCall(@Param('callId') callId: string, @Req() request: Request, @Res() response: Response) {
    const session = await this.gate.adminOr403(request, response);
    if (!session) return;
    if ((await requeueCalls(this.requeueDeps(), session.portalId, [callId])).requeued) {
      const shown = callId.slice(0, 128);
      this.responder.audit(session, 'call-requeued', { callId: shown }, `re-queued call ${shown}`);
    }
    await this.responder.done(response, session, 'requeued');
  }

  @Post('calls/requeue-failed')
  @HttpCode(HttpStatus.OK)
  async requeueFailed(@Req() request: Request, @Res() response: Response) {
    const session = await this.gate.adminOr403(request, response);
    if (!session) return;
    const done = await requeueAllFailed(this.requeueDeps(), session.portalId);
    if (done) {
      this.responder.audit(session, 'calls-requeued', { requeued: done }, `re-queued ${done} failed calls`);
    }
    await this.responder.done(response, session, 'requeued');
  }

  private requeueDeps(): RequeueDeps {
    const { calls, signal, delivery } = this;
    return { calls, signal, holdEndedWithoutStartMs: delivery.holdEndedWithoutStartMs };
  }
}
