import { Body, Controller, Get, HttpCode, NotFoundException, Param, Post, UseGuards } from '@nestjs/common';
import {
  ApiBasicAuth,
  ApiBearerAuth,
  ApiBody,
  ApiExtraModels,
  ApiOperation,
  ApiResponse,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import { CallStatusView, toStatusView } from '../calls/call-status';
import { CallStore, IngestResult } from '../store/call-store';
import { CallEventDto } from './call-event.dto';
import { CallEventSubmission } from './call-event-submission';
import { MAX_EVENTS_PER_REQUEST } from './call-event-validation';
import { PbxThrottlerGuard } from './pbx-throttler.guard';
import { PbxPortal, PbxTokenGuard } from './pbx-token.guard';

/** The PBX-facing API, version 1 (docs/API.md). */
@ApiTags('PBX')
@ApiBearerAuth()
@ApiBasicAuth()
@ApiExtraModels(CallEventDto)
@ApiResponse({ status: 401, description: 'No valid PBX token (Bearer, or Basic with the token as password)' })
@Controller('v1/calls')
@UseGuards(PbxTokenGuard, PbxThrottlerGuard)
export class PbxController {
  constructor(
    private readonly submission: CallEventSubmission,
    private readonly store: CallStore,
  ) {}

  /** 202 once every event of the body is committed to disk; the portal is the background's business. */
  @Post('events')
  @HttpCode(202)
  @ApiOperation({ summary: 'Post one call event or an array of up to 500; stored durably before 202' })
  @ApiBody({
    schema: {
      oneOf: [
        { $ref: getSchemaPath(CallEventDto) },
        {
          type: 'array',
          items: { $ref: getSchemaPath(CallEventDto) },
          minItems: 1,
          maxItems: MAX_EVENTS_PER_REQUEST,
        },
      ],
    },
    examples: {
      started: {
        value: {
          event: 'call.started',
          callId: '1732269000.1234',
          direction: 'inbound',
          phoneNumber: '+49 151 1234-5678',
          extension: '101',
          at: '2026-11-22T10:00:00+01:00',
        },
      },
      ended: {
        value: {
          event: 'call.ended',
          callId: '1732269000.1234',
          at: '2026-11-22T10:02:07+01:00',
          durationSec: 121,
          status: 'answered',
          recordingUrl: 'https://pbx.example.com/rec/1732269000.1234.mp3',
        },
      },
      clickToCall: {
        value: {
          event: 'call.ended',
          callId: '1732269100.1240',
          direction: 'outbound',
          phoneNumber: '+49 151 1234-5678',
          extension: '101',
          at: '2026-11-22T10:05:00+01:00',
          durationSec: 42,
          status: 'answered',
          crmCallId: 'externalCall.2f5e8c0b9a7d4e1f.1732269000',
        },
      },
    },
  })
  @ApiResponse({
    status: 202,
    description: 'Every event is stored on disk',
    schema: { example: { accepted: 2, duplicates: 0 } },
  })
  @ApiResponse({
    status: 400,
    description: 'Bad events: each bad field named (with its index in an array); nothing stored',
  })
  @ApiResponse({ status: 413, description: 'Body larger than PBX_BODY_LIMIT' })
  @ApiResponse({ status: 415, description: 'Body is not JSON' })
  @ApiResponse({ status: 429, description: 'This PBX token sends too many requests' })
  @ApiResponse({ status: 503, description: 'The store could not commit: nothing stored, send again' })
  postEvents(@PbxPortal() portalId: string, @Body() body: unknown): Promise<IngestResult> {
    return this.submission.submit(portalId, body);
  }

  @Get(':callId')
  @ApiOperation({ summary: 'Where a call stands: queued, registered, finished or failed' })
  @ApiResponse({
    status: 200,
    schema: {
      example: {
        callId: '1732269000.1234',
        state: 'finished',
        crm: { callId: 'externalCall.5f0e…', entityType: 'LEAD', entityId: 17, createdLead: 17 },
        attempts: 3,
        lastError: null,
      },
    },
  })
  @ApiResponse({ status: 404, description: 'The bridge never heard of this call' })
  async getCall(@PbxPortal() portalId: string, @Param('callId') callId: string): Promise<CallStatusView> {
    const call = await this.store.findCall(portalId, callId);
    if (!call) {
      throw new NotFoundException(`the bridge never heard of call ${JSON.stringify(callId.slice(0, 128))}`);
    }
    return toStatusView(call);
  }
}
