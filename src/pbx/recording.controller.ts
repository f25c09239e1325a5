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
import { AUDIO_CONTENT_TYPES, mediaType, sniffAudio, storedRecordingOf } from '../common/audio-type';
import { WorkSignal } from '../common/work-signal';
import { RecordingSettings } from '../config/settings';
import { CallStore } from '../store/call-store';
import { PbxThrottlerGuard } from './pbx-throttler.guard';
import { PbxPortal, PbxTokenGuard } from './pbx-token.guard';

/** The types a PBX may push (SPEC.md §5). */
const PUSH_TYPES = ['audio/mpeg', 'audio/wav', 'audio/x-wav'];

/**
 * `PUT /v1/calls/:callId/recording` (SPEC.md §5): a PBX that cannot serve its files pushes one. The body is
 * read as it streams, never past RECORDING_MAX_MB, and stored durably (with the call's change, in one
 * synced transaction) before the 202; delivery uploads it after the call's finish and then deletes it.
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
    if (Number.isFinite(declared) && declared > max)
      throw refuse(request, HttpStatus.PAYLOAD_TOO_LARGE, tooBig);
    if (!(await this.store.findCall(portalId, callId))) {
      throw refuse(request, HttpStatus.NOT_FOUND, `the bridge never heard of call ${callId}`);
    }
    const content = await readCapped(request, max);
    if (!content) throw refuse(request, HttpStatus.PAYLOAD_TOO_LARGE, tooBig);
    const kind = sniffAudio(content.subarray(0, 64), type);
    if (!kind || kind !== AUDIO_CONTENT_TYPES[type]) {
      throw new HttpException(
        `the body is not a ${AUDIO_CONTENT_TYPES[type]} file`,
        HttpStatus.UNSUPPORTED_MEDIA_TYPE,
      );
    }
    const stored = storedRecordingOf(content, kind, callId, this.settings.requestMaxBytes);
    const now = Date.now();
    const call = await this.store.putRecording(portalId, callId, content, (current) =>
      markRecordingStored(current, 'push', stored, now),
    );
    if (!call) throw new NotFoundException(`the bridge never heard of call ${callId}`);
    this.work.workAdded(portalId);
    return { callId, bytes: stored.bytes, filename: stored.filename };
  }
}

/** An answer before the body is read: the connection closes after it, so the rest is not read either. */
function refuse(request: Request, status: HttpStatus, message: string): HttpException {
  request.res?.setHeader('Connection', 'close');
  return new HttpException(message, status);
}

/** The body, or undefined once it passes `max` bytes (reading stops there). */
function readCapped(request: Request, max: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const onData = (chunk: Buffer) => {
      total += chunk.length;
      if (total > max) {
        request.off('data', onData);
        request.pause();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    request.on('data', onData);
    request.once('end', () => resolve(Buffer.concat(chunks, total)));
    request.once('error', reject);
  });
}
