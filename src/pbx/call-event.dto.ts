import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUrl,
  Length,
  Matches,
  MaxLength,
  Min,
  ValidateIf,
} from 'class-validator';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { CRM_CALL_ID_MAX, CRM_CALL_ID_PATTERN } from '../calls/click-match';
import { CallEventName, Direction, EndStatus } from '../calls/call';

const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;
const OFFSET_MESSAGE =
  '$property must be an ISO 8601 date-time with a UTC offset, e.g. 2026-11-22T10:00:00+01:00';
const isEnded = (event: CallEventDto) => event.event === 'call.ended';
const needsParty = (event: CallEventDto) =>
  event.event === 'call.started' || event.direction !== undefined || event.phoneNumber !== undefined;

/** One call event as a PBX posts it (docs/API.md). Strings stop at the portal's 255 characters. */
export class CallEventDto {
  @IsIn(['call.started', 'call.answered', 'call.ended'], {
    message: 'event must be one of call.started, call.answered, call.ended',
  })
  @ApiProperty({
    enum: ['call.started', 'call.answered', 'call.ended'],
    description:
      'Keyed per call by its name (a repeat is a duplicate); call.answered also by who answered (a transfer). ' +
      "A later call.started naming phones the call does not ring yet (a queue's next member, a hunt group, " +
      'follow-me) adds them: they are shown the card while the call rings; one naming nobody new is a duplicate',
    example: 'call.started',
  })
  event: CallEventName;

  @ApiProperty({
    description:
      "The PBX's own call id (Asterisk linkedid, FreeSWITCH uuid); with event, the idempotency key",
    minLength: 1,
    maxLength: 128,
    example: '1732269000.1234',
  })
  @IsString()
  @Length(1, 128)
  @Matches(/^[^\p{C}]+$/u, { message: 'callId must be printable characters only' })
  callId: string;

  @ValidateIf(needsParty)
  @IsIn(['inbound', 'outbound'], {
    message: 'direction must be inbound or outbound (needed on call.started, and with phoneNumber)',
  })
  @ApiPropertyOptional({
    enum: ['inbound', 'outbound'],
    description: 'Needed on call.started, and on call.ended when no start was sent',
    example: 'inbound',
  })
  direction?: Direction;

  @ApiPropertyOptional({
    description: 'The outside party; national numbers use DEFAULT_COUNTRY',
    maxLength: 255,
    example: '+49 151 1234-5678',
  })
  @ValidateIf(needsParty)
  @IsString({ message: 'phoneNumber must be a string (needed on call.started, and with direction)' })
  @IsNotEmpty()
  @MaxLength(255)
  phoneNumber?: string;

  @ApiPropertyOptional({
    description: "The employee's internal number (portal USER_PHONE_INNER)",
    maxLength: 255,
    example: '101',
  })
  @IsOptional()
  @IsString()
  @Length(1, 255)
  extension?: string;

  @ApiPropertyOptional({
    description:
      'On call.started: every internal number ringing at once (ring group, queue); each is shown the call card, the call is registered for the first. ' +
      'A later call.started of the same call naming numbers that began ringing since shows them the card too (while nobody has answered)',
    type: [String],
    minItems: 1,
    maxItems: 50,
    example: ['101', '102', '103'],
  })
  @IsOptional()
  @IsArray({ message: 'extensions must be an array of internal numbers' })
  @ArrayMinSize(1, { message: 'extensions must name 1 to 50 internal numbers' })
  @ArrayMaxSize(50, { message: 'extensions must name 1 to 50 internal numbers' })
  @IsString({ each: true, message: 'each of extensions must be a string' })
  @Length(1, 255, { each: true, message: 'each of extensions must be 1 to 255 characters' })
  extensions?: string[];

  @ApiPropertyOptional({
    description: 'The portal user id, when the PBX knows it instead of an extension',
    minimum: 1,
    example: 7,
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  userId?: number;

  @ApiProperty({
    description: 'When this event happened: ISO 8601 with a UTC offset',
    example: '2026-11-22T10:00:00+01:00',
  })
  @IsString()
  @Matches(ISO_WITH_OFFSET, { message: OFFSET_MESSAGE })
  at: string;

  @ApiPropertyOptional({
    description: 'On call.ended without an earlier call.started: when the call began',
    example: '2026-11-22T10:00:00+01:00',
  })
  @IsOptional()
  @IsString()
  @Matches(ISO_WITH_OFFSET, { message: OFFSET_MESSAGE })
  startedAt?: string;

  @ApiPropertyOptional({ description: 'On call.ended: talk time in seconds', minimum: 0, example: 121 })
  @ValidateIf(isEnded)
  @IsInt({ message: 'durationSec must be a whole number of seconds (needed on call.ended)' })
  @Min(0)
  durationSec?: number;

  @ValidateIf(isEnded)
  @IsIn(['answered', 'missed', 'busy', 'declined', 'cancelled', 'failed'], {
    message:
      'status must be one of answered, missed, busy, declined, cancelled, failed (needed on call.ended)',
  })
  @ApiPropertyOptional({
    enum: ['answered', 'missed', 'busy', 'declined', 'cancelled', 'failed'],
    description: 'On call.ended',
    example: 'answered',
  })
  status?: EndStatus;

  @ApiPropertyOptional({
    description: 'With status failed: why, sent as FAILED_REASON',
    maxLength: 255,
    example: 'Trunk unavailable',
  })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  failedReason?: string;

  @ApiPropertyOptional({
    description: 'On call.ended: the recording, attached after finish',
    maxLength: 255,
    example: 'https://pbx.example.com/rec/1732269000.1234.mp3',
  })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  @IsUrl({ protocols: ['http', 'https'], require_protocol: true, require_tld: false })
  recordingUrl?: string;

  @ApiPropertyOptional({
    description:
      "Click-to-call: the portal's CALL_ID of a call the PBX dialled for a click (from the dialer, or the " +
      'dialplan variable CRM_CALL_ID). On any event: the call is never registered, that CALL_ID is finished.',
    maxLength: CRM_CALL_ID_MAX,
    pattern: CRM_CALL_ID_PATTERN.source,
    example: 'externalCall.2f5e8c0b9a7d4e1f.1732269000',
  })
  @IsOptional()
  @IsString()
  @Length(1, CRM_CALL_ID_MAX)
  @Matches(CRM_CALL_ID_PATTERN, {
    message: "crmCallId must be the portal's CALL_ID (letters, digits, '.', '_', ':', '-')",
  })
  crmCallId?: string;

  @ApiPropertyOptional({
    description:
      'The company\'s number (its line, docs/API.md "Lines") the call came in on (inbound: the number the outside party dialled) ' +
      'or went out from (outbound: the caller ID presented outside); on call.started, and on call.ended when no ' +
      'start was sent. A phone number is normalised to E.164 like phoneNumber; otherwise 1-50 letters, digits, ' +
      "'.', '+', '-', '_'. Unset: B24_LINE_NUMBER",
    maxLength: 255,
    example: '+49 30 1234567',
  })
  @IsOptional()
  @IsString({ message: 'line must be a string: a phone number or a line name' })
  @Length(1, 255)
  line?: string;
}
