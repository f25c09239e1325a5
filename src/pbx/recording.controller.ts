import {
  Controller,
  HttpCode,
  HttpException,
  HttpStatus,
  NotFoundException,
  Param,
  Put,
  Req,
  UseGuards,
} from '@nestjs/common';
import {
  ApiBasicAuth,
  ApiBearerAuth,
  ApiConsumes,
  ApiOperation,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Request } from 'express';
import { markRecordingStored } from '../calls/call-lifecycle';
import { CallRecord } from '../calls/call';
import { AUDIO_CONTENT_TYPES, mediaType, recordingFileName } from '../common/audio-type';
import {
  NotAudioError,
  RecordingScan,
  RecordingTooLargeError,
  scannedRecording,
} from '../common/recording-stream';
import { WorkSignal } from '../common/work-signal';
import { RecordingSettings } from '../config/settings';
import { CallStore, RecordingQuotaError, StagedRecording } from '../store/call-store';
import { PbxThrottlerGuard } from './pbx-throttler.guard';
import { PbxPortal, PbxTokenGuard } from './pbx-token.guard';

/** The types a PBX may push (docs/API.md). */
const PUSH_TYPES = ['audio/mpeg', 'audio/wav', 'audio/x-wav'];

/**
 * `PUT /v1/calls/:callId/recording` (docs/API.md): a PBX that cannot serve its files pushes one. The body is
 * written to the store in chunks as it streams (never held whole), never past RECORDING_MAX_MB nor the
 * portal's RECORDING_QUOTA_MB, and becomes the call's (with the call's change, in one synced transaction)
 * before the 202; delivery uploads it after the call's finish and then deletes it.
 */
@ApiTags('PBX')
@ApiBearerAuth()
@ApiBasicAuth()
@ApiResponse({ status: 401, description: 'No valid PBX token (Bearer, or Basic with the token as password)' })
@Controller('v1/calls')
@UseGuards(PbxTokenGuard, PbxThrottlerGuard)
export class RecordingController {
  constructor(
    private readonly store: CallStore,
    private readonly settings: RecordingSettings,
    private readonly work: WorkSignal,
  ) {}

  @Put(':callId/recording')
  @HttpCode(202)
  @ApiOperation({ summary: "Push a call's recording (wav or mp3); 202 once stored durably" })
  @ApiConsumes(...PUSH_TYPES)
  @ApiResponse({ status: 202, description: 'Stored; uploaded to the portal once the call is finished there' })
  @ApiResponse({ status: 404, description: 'The bridge never heard of this call' })
  @ApiResponse({ status: 413, description: 'Larger than RECORDING_MAX_MB' })
  @ApiResponse({ status: 415, description: 'Not audio/mpeg, audio/wav or audio/x-wav, or not such a file' })
  @ApiResponse({
    status: 507,
    description: "The portal's recordings waiting for upload would pass RECORDING_QUOTA_MB; nothing stored",
  })
  async push(
    @PbxPortal() portalId: string,
    @Param('callId') callId: string,
    @Req() request: Request,
  ): Promise<{ callId: string; bytes: number; filename: string }> {
    const type = mediaType(request.headers['content-type']);
    if (!PUSH_TYPES.includes(type)) {
      throw refuse(
        request,
        HttpStatus.UNSUPPORTED_MEDIA_TYPE,
        `Content-Type must be one of ${PUSH_TYPES.join(', ')}`,
      );
    }
    const max = this.settings.maxBytes;
    const tooBig = `the recording is larger than RECORDING_MAX_MB (${Math.round(max / 1_000_000)} MB)`;
    const declared = Number(request.headers['content-length']);
    if (Number.isFinite(declared) && declared > max) {
      throw refuse(request, HttpStatus.PAYLOAD_TOO_LARGE, tooBig);
    }
    if (!(await this.store.findCall(portalId, callId))) {
      throw refuse(request, HttpStatus.NOT_FOUND, `the bridge never heard of call ${callId}`);
    }
    const quota = this.settings.quotaBytes;
    if (quota !== undefined) {
      // Checked exactly when the file is taken; a portal already full is refused before the body is read.
      const held = await this.store.recordingBytes(portalId);
      if (held >= quota || (Number.isFinite(declared) && declared > quota)) {
        throw refuse(request, HttpStatus.INSUFFICIENT_STORAGE, overQuota(quota));
      }
    }
    // The body goes to the store as it arrives, a chunk at a time: never held whole.
    const scan = new RecordingScan(max, type, tooBig);
    let staged: StagedRecording;
    try {
      staged = await this.store.stageRecording(
        portalId,
        scan.pass(request.iterator({ destroyOnReturn: false })),
      );
    } catch (error) {
      if (error instanceof RecordingTooLargeError) {
        throw refuse(request, HttpStatus.PAYLOAD_TOO_LARGE, tooBig);
      }
      if (error instanceof NotAudioError) {
        throw refuse(request, HttpStatus.UNSUPPORTED_MEDIA_TYPE, notA(type));
      }
      throw error;
    }
    const discard = () => this.store.discardStagedRecording(portalId, staged);
    if (scan.kind !== AUDIO_CONTENT_TYPES[type]) {
      await discard();
      throw new HttpException(notA(type), HttpStatus.UNSUPPORTED_MEDIA_TYPE);
    }
    const stored = scannedRecording(
      scan,
      recordingFileName(callId, scan.kind),
      this.settings.requestMaxBytes,
    );
    const now = Date.now();
    let call: CallRecord | undefined;
    try {
      call = await this.store.putRecording({
        portalId,
        callId,
        staged,
        mutate: (current) => markRecordingStored(current, 'push', stored, now),
        quotaBytes: quota,
      });
    } catch (error) {
      await discard();
      if (error instanceof RecordingQuotaError) {
        throw new HttpException(overQuota(error.quotaBytes), HttpStatus.INSUFFICIENT_STORAGE);
      }
      throw error;
    }
    if (!call) {
      await discard();
      throw new NotFoundException(`the bridge never heard of call ${callId}`);
    }
    this.work.workAdded(portalId);
    return { callId, bytes: stored.bytes, filename: stored.filename };
  }
}

function notA(type: string): string {
  return `the body is not a ${AUDIO_CONTENT_TYPES[type]} file`;
}

function overQuota(quotaBytes: number): string {
  return `this portal's recordings waiting for upload would pass RECORDING_QUOTA_MB (${Math.round(quotaBytes / 1_000_000)} MB); nothing was stored: push it again once the bridge has uploaded the ones it holds`;
}

/** An answer before the body is read: the connection closes after it, so the rest is not read either. */
function refuse(request: Request, status: HttpStatus, message: string): HttpException {
  request.res?.setHeader('Connection', 'close');
  return new HttpException(message, status);
}
