import { Body, Controller, Get, HttpCode, NotFoundException, Param, Post, UseGuards } from '@nestjs/common';
import { CallIntake } from '../calls/call-intake.service';
import { CallStatusView, toStatusView } from '../calls/call-status';
import { AppConfig } from '../config/app-config';
import { DeliveryService } from '../delivery/delivery.service';
import { CallStore, IngestResult } from '../store/call-store';
import { parseCallEvents } from './call-event-validation';
import { PbxThrottlerGuard } from './pbx-throttler.guard';
import { PbxTokenGuard } from './pbx-token.guard';

/** The PBX-facing API, version 1 (SPEC.md §2). */
@Controller('v1/calls')
@UseGuards(PbxTokenGuard, PbxThrottlerGuard)
export class PbxController {
  constructor(
    private readonly intake: CallIntake,
    private readonly store: CallStore,
    private readonly delivery: DeliveryService,
    private readonly config: AppConfig,
  ) {}

  /** 202 once every event of the body is committed to disk; the portal is the background's business. */
  @Post('events')
  @HttpCode(202)
  async postEvents(@Body() body: unknown): Promise<IngestResult> {
    const events = parseCallEvents(body, this.config.DEFAULT_COUNTRY);
    return this.intake.submit(events);
  }

  @Get(':callId')
  async getCall(@Param('callId') callId: string): Promise<CallStatusView> {
    const call = await this.store.findCall(this.delivery.portalId, callId);
    if (!call)
      throw new NotFoundException(`the bridge never heard of call ${JSON.stringify(callId.slice(0, 128))}`);
    return toStatusView(call);
  }
}
