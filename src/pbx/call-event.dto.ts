import { Type } from 'class-transformer';
import {
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
import { CallEventName, Direction, EndStatus } from '../calls/call';

const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;
const OFFSET_MESSAGE =
  '$property must be an ISO 8601 date-time with a UTC offset, e.g. 2026-11-22T10:00:00+01:00';
const isEnded = (event: CallEventDto) => event.event === 'call.ended';
const needsParty = (event: CallEventDto) =>
  event.event === 'call.started' || event.direction !== undefined || event.phoneNumber !== undefined;

/** One call event as a PBX posts it (SPEC.md §2). Strings stop at the portal's 255 characters. */
export class CallEventDto {
  @IsIn(['call.started', 'call.answered', 'call.ended'], {
    message: 'event must be one of call.started, call.answered, call.ended',
  })
  event: CallEventName;

  @IsString()
  @Length(1, 128)
  @Matches(/^[^\p{C}]+$/u, { message: 'callId must be printable characters only' })
  callId: string;

  @ValidateIf(needsParty)
  @IsIn(['inbound', 'outbound'], {
    message: 'direction must be inbound or outbound (needed on call.started, and with phoneNumber)',
  })
  direction?: Direction;

  @ValidateIf(needsParty)
  @IsString({ message: 'phoneNumber must be a string (needed on call.started, and with direction)' })
  @IsNotEmpty()
  @MaxLength(255)
  phoneNumber?: string;

  @IsOptional()
  @IsString()
  @Length(1, 255)
  extension?: string;

  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  userId?: number;

  @IsString()
  @Matches(ISO_WITH_OFFSET, { message: OFFSET_MESSAGE })
  at: string;

  @IsOptional()
  @IsString()
  @Matches(ISO_WITH_OFFSET, { message: OFFSET_MESSAGE })
  startedAt?: string;

  @ValidateIf(isEnded)
  @IsInt({ message: 'durationSec must be a whole number of seconds (needed on call.ended)' })
  @Min(0)
  durationSec?: number;

  @ValidateIf(isEnded)
  @IsIn(['answered', 'missed', 'busy', 'declined', 'cancelled', 'failed'], {
    message:
      'status must be one of answered, missed, busy, declined, cancelled, failed (needed on call.ended)',
  })
  status?: EndStatus;

  @IsOptional()
  @IsString()
  @MaxLength(255)
  failedReason?: string;

  @IsOptional()
  @IsString()
  @MaxLength(255)
  @IsUrl({ protocols: ['http', 'https'], require_protocol: true, require_tld: false })
  recordingUrl?: string;
}
