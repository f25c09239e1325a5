import { Controller, HttpCode, HttpStatus, Param, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { requeue } from '../calls/call-lifecycle';
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
    if (await this.requeue(session.portalId, [callId])) {
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
    const failed = await this.calls.listCalls(session.portalId, 'failed', 10_000);
    const done = await this.requeue(
      session.portalId,
      failed.map((call) => call.callId),
    );
    if (done) {
      this.responder.audit(session, 'calls-requeued', { requeued: done }, `re-queued ${done} failed calls`);
    }
    await this.responder.done(response, session, 'requeued');
  }

  private async requeue(portalId: string, callIds: string[]): Promise<number> {
    // The calls that were failed when the update ran: a call delivered meanwhile is not re-queued.
    const requeued = new Set<string>();
    await this.calls.updateCalls(portalId, callIds, (current) => {
      if (!current.failed) {
        requeued.delete(current.callId);
        return current;
      }
      requeued.add(current.callId);
      return requeue(current, Date.now(), this.delivery.holdEndedWithoutStartMs);
    });
    this.signal.workAdded(portalId);
    return requeued.size;
  }
}
