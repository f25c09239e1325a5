import { Transform } from 'class-transformer';
import { IsIn, IsOptional, IsString, Matches, ValidateIf } from 'class-validator';
import { DateTime } from 'luxon';
import { createHash } from 'node:crypto';
import { Direction, EndStatus } from '../../calls/call';
import { toE164 } from '../../common/phone-number';
import {
  AdapterOutcome,
  badField,
  lowerText,
  OptionalText,
  optionalText,
  RequiredText,
  text,
  validateNative,
} from './native-record';
import { secondsAfter } from './pbx-time';

/**
 * 3CX call journaling: the `ReportCall` scenario of the server-side CRM template
 * (docs/pbx/3cx-crm-template.xml) posts the call's variables under their 3CX names, as JSON.
 */

const WHAT = '3CX call journal';
const CALL_TYPES = ['inbound', 'outbound', 'missed', 'notanswered'] as const;
type CallType = (typeof CALL_TYPES)[number];

export class ThreeCxCallDto {
  /** Inbound and Outbound are answered calls; Missed is an inbound call, Notanswered an outbound one. */
  @Transform(lowerText)
  @IsIn(CALL_TYPES, { message: 'CallType must be Inbound, Outbound, Missed or Notanswered' })
  CallType: CallType;

  /** The outside party. */
  @RequiredText()
  Number: string;

  @Transform(lowerText)
  @IsOptional()
  @IsIn(['inbound', 'outbound'], { message: 'CallDirection must be Inbound or Outbound' })
  CallDirection?: Direction;

  /** The agent's extension number. */
  @OptionalText()
  Agent?: string;

  /** hh:mm:ss as 3CX writes [Duration], or whole seconds. */
  @Transform(text)
  @Matches(/^(\d+:[0-5]\d:[0-5]\d|\d+)$/, { message: 'Duration must be hh:mm:ss or whole seconds' })
  Duration: string;

  /** UTC: ISO 8601 (the template's `ToString("yyyy-MM-ddTHH:mm:ssZ")`), or milliseconds since 1970. */
  @Transform(optionalText)
  @ValidateIf((call: ThreeCxCallDto) => call.DateTime === undefined || call.CallStartTimeUTC !== undefined)
  @IsString({ message: 'CallStartTimeUTC is required (or DateTime in the PBX local time)' })
  CallStartTimeUTC?: string;

  @OptionalText()
  CallEndTimeUTC?: string;

  /** The call's start in the 3CX server's local time, used only without CallStartTimeUTC. */
  @OptionalText()
  DateTime?: string;

  /** Where 3CX offers it: the recording as a full URL. */
  @OptionalText()
  RecordingUrl?: string;
}

/** A 3CX journal entry as one `call.ended`; 3CX knows no call id, so one is derived (`threeCxCallId`). */
export function threeCxJournalToEvents(body: unknown, zone: string, defaultCountry?: string): AdapterOutcome {
  const call = validateNative(ThreeCxCallDto, body, WHAT);
  const direction =
    call.CallDirection ?? (['inbound', 'missed'].includes(call.CallType) ? 'inbound' : 'outbound');
  const startField = call.CallStartTimeUTC !== undefined ? 'CallStartTimeUTC' : 'DateTime';
  const startedAt = moment(
    call.CallStartTimeUTC ?? call.DateTime ?? '',
    call.CallStartTimeUTC ? 'utc' : zone,
  );
  if (!startedAt) throw badField(WHAT, startField, `${startField} is not a date and time 3CX writes`);
  const status = statusOf(call.CallType);
  // A missed or unanswered call has no talk time, whatever 3CX counted while it rang.
  const durationSec = status === 'answered' ? seconds(call.Duration) : 0;
  const endedAt = call.CallEndTimeUTC ? moment(call.CallEndTimeUTC, 'utc') : undefined;
  if (call.CallEndTimeUTC && !endedAt) {
    throw badField(WHAT, 'CallEndTimeUTC', 'CallEndTimeUTC is not a date and time 3CX writes');
  }
  const callId = threeCxCallId(
    { direction, number: call.Number, agent: call.Agent, startedAt },
    defaultCountry,
  );
  const event = {
    event: 'call.ended',
    callId,
    direction,
    phoneNumber: call.Number,
    extension: call.Agent,
    startedAt,
    at: endedAt ?? secondsAfter(startedAt, seconds(call.Duration)),
    durationSec,
    status,
    recordingUrl: call.RecordingUrl,
  };
  return {
    events: [event],
    sources: {
      phoneNumber: 'Number',
      extension: 'Agent',
      startedAt: startField,
      at: 'CallEndTimeUTC',
      durationSec: 'Duration',
      recordingUrl: 'RecordingUrl',
    },
  };
}

/**
 * The call id 3CX does not give: `3cx-` and the first 32 hex digits of SHA-256 over direction, the number
 * in E.164, the agent's extension and the start to the second in UTC. The same call posted again has the
 * same id and is a duplicate; two calls differ in at least one of these.
 */
export function threeCxCallId(
  call: { direction: Direction; number: string; agent?: string; startedAt: string },
  defaultCountry?: string,
): string {
  const number = toE164(call.number, defaultCountry) ?? call.number.trim();
  const start = DateTime.fromISO(call.startedAt, { zone: 'utc' }).toFormat("yyyy-MM-dd'T'HH:mm:ss'Z'");
  const key = [call.direction, number, call.agent ?? '', start].join('|');
  return `3cx-${createHash('sha256').update(key).digest('hex').slice(0, 32)}`;
}

function statusOf(callType: CallType): EndStatus {
  return callType === 'inbound' || callType === 'outbound' ? 'answered' : 'missed';
}

function seconds(duration: string): number {
  return duration.split(':').reduce((total, part) => total * 60 + Number(part), 0);
}

/** The ways 3CX writes a moment: ISO 8601, SQL-like, US culture, milliseconds since 1970. */
function moment(value: string, zone: string): string | undefined {
  const trimmed = value.trim();
  const candidates = [
    /^\d{12,}$/.test(trimmed) ? DateTime.fromMillis(Number(trimmed), { zone }) : undefined,
    DateTime.fromISO(trimmed, { zone, setZone: true }),
    DateTime.fromSQL(trimmed, { zone }),
    DateTime.fromFormat(trimmed, 'M/d/yyyy h:mm:ss a', { zone, locale: 'en-US' }),
    DateTime.fromFormat(trimmed, 'd.M.yyyy HH:mm:ss', { zone }),
  ];
  const found = candidates.find((candidate) => candidate?.isValid);
  return found?.startOf('second').toISO({ suppressMilliseconds: true }) ?? undefined;
}
