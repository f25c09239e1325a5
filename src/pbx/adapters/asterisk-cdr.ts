import { Transform } from 'class-transformer';
import { IsIn, IsNotEmpty, IsOptional, IsString, Length, Matches } from 'class-validator';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { Direction, EndStatus } from '../../calls/call';
import {
  AdapterOutcome,
  badField,
  lowerText,
  nativeBadRequest,
  optionalText,
  text,
  validateNative,
} from './native-record';
import { fromLocalTime, LOCAL_TIME, secondsAfter } from './pbx-time';

/**
 * Asterisk: the form a dialplan hang-up handler posts with `CURL()` (docs/PBX.md has the handler): the
 * CDR's own fields plus the two the dialplan knows and the CDR does not, `direction` and `extension`.
 * Without `direction` it is inferred from which of `src` and `dst` is an employee's internal number.
 */

const WHAT = 'Asterisk CDR';
const DIGITS = /^\d+$/;
/** Whole seconds, at most nine digits (31 years): a longer number is no call's length. */
const SECONDS = /^\d{1,9}$/;

/** CDR(disposition), and Dial's DIALSTATUS for handlers that post that instead. */
const DISPOSITIONS = [
  'ANSWERED',
  'NO ANSWER',
  'BUSY',
  'FAILED',
  'CONGESTION',
  'ANSWER',
  'NOANSWER',
  'CANCEL',
  'CHANUNAVAIL',
] as const;
type Disposition = (typeof DISPOSITIONS)[number];

export class AsteriskCdrDto {
  /** The call: the same on every channel of it (Asterisk 1.8+), so either leg's handler names one call. */
  @Transform(text)
  @IsString({ message: 'linkedid must be the call linkedid, ${CDR(linkedid)}' })
  @Length(1, 128)
  linkedid: string;

  @Transform(optionalText)
  @IsOptional()
  @IsString()
  uniqueid?: string;

  /** Set by the dialplan; when absent, inferred from `src` and `dst`. */
  @Transform(lowerText)
  @IsOptional()
  @IsIn(['inbound', 'outbound'], { message: 'direction must be inbound or outbound, or left out' })
  direction?: Direction;

  /**
   * The caller: the outside number of an inbound call (empty when the caller withheld it), the extension
   * of an outbound one.
   */
  @Transform(optionalText)
  @IsOptional()
  @IsString()
  src?: string;

  /** The number dialled: the outside number of an outbound call. */
  @Transform(text)
  @IsString()
  @IsNotEmpty()
  dst: string;

  /** The employee's internal number when `src`/`dst` is not it (an inbound call's dst is often the DID). */
  @Transform(optionalText)
  @IsOptional()
  @IsString()
  extension?: string;

  @Transform(({ value }) => (typeof value === 'string' ? value.trim().toUpperCase() : value))
  @IsIn(DISPOSITIONS, { message: `disposition must be one of ${DISPOSITIONS.join(', ')}` })
  disposition: Disposition;

  /** Seconds from start to hang-up. */
  @Transform(text)
  @Matches(SECONDS, { message: 'duration must be whole seconds (at most 9 digits)' })
  duration: string;

  /** Talk time: seconds from answer to hang-up. */
  @Transform(text)
  @Matches(SECONDS, { message: 'billsec must be whole seconds (at most 9 digits)' })
  billsec: string;

  /** CDR(start): the PBX's local time, in PBX_TIME_ZONE or the URL's `tz`. */
  @Transform(text)
  @Matches(LOCAL_TIME, { message: 'start must be YYYY-MM-DD HH:MM:SS, as ${CDR(start)} writes it' })
  start: string;

  /** The recording as a full URL the PBX serves. */
  @Transform(optionalText)
  @IsOptional()
  @IsString()
  recording?: string;
}

/** How to tell an employee's internal number from an outside one, for a CDR without `direction`. */
export interface InternalNumbers {
  /** The employee directory knows an active employee with this internal number. */
  isEmployee(number: string): boolean;
  /** PBX_INTERNAL_MAX_DIGITS: a number the directory does not know is internal up to this many digits. */
  maxDigits: number;
}

/** An Asterisk CDR as one `call.ended` carrying everything needed to register the call too. */
export function asteriskCdrToEvents(body: unknown, zone: string, numbers: InternalNumbers): AdapterOutcome {
  const cdr = validateNative(AsteriskCdrDto, body, WHAT);
  const { direction, directionInferred } = cdr.direction
    ? { direction: cdr.direction, directionInferred: undefined }
    : inferDirection(cdr, numbers);
  const inbound = direction === 'inbound';
  const startedAt = fromLocalTime(cdr.start, zone);
  if (!startedAt) throw badField(WHAT, 'start', `start ${cdr.start} is not a real moment in ${zone}`);
  const { status, failedReason } = statusOf(cdr.disposition, direction);
  const event = {
    event: 'call.ended',
    callId: cdr.linkedid,
    direction,
    phoneNumber: inbound ? cdr.src : cdr.dst,
    extension: cdr.extension ?? (inbound ? cdr.dst : cdr.src),
    startedAt,
    at: secondsAfter(startedAt, Number(cdr.duration)),
    durationSec: Number(cdr.billsec),
    status,
    failedReason,
    recordingUrl: cdr.recording,
  };
  return {
    events: [event],
    sources: {
      callId: 'linkedid',
      phoneNumber: inbound ? 'src' : 'dst',
      extension: cdr.extension ? 'extension' : inbound ? 'dst' : 'src',
      at: 'duration',
      durationSec: 'billsec',
      status: 'disposition',
      recordingUrl: 'recording',
    },
    directionInferred,
  };
}

/**
 * Asterisk's CDR has no direction: the side with an employee's internal number placed (src) or took (dst)
 * the call. A call with both sides internal, or neither, cannot be told and is a 400 naming both.
 */
function inferDirection(
  cdr: AsteriskCdrDto,
  numbers: InternalNumbers,
): { direction: Direction; directionInferred: string } {
  const src = internalBecause(cdr.src, numbers);
  const dst = internalBecause(cdr.dst, numbers);
  if (src && !dst) {
    return { direction: 'outbound', directionInferred: `src ${cdr.src} is ${src}, dst is outside: outbound` };
  }
  if (dst && !src) {
    return { direction: 'inbound', directionInferred: `dst ${cdr.dst} is ${dst}, src is outside: inbound` };
  }
  const parties = `src ${cdr.src ?? '(empty)'}, dst ${cdr.dst}`;
  const why = src
    ? `both src and dst are internal numbers (${parties})`
    : `neither src nor dst is an employee's internal number (${parties})`;
  const problem = `direction is missing and cannot be inferred: ${why}; set direction in the dialplan`;
  throw nativeBadRequest(`invalid ${WHAT}: nothing was stored`, [
    { field: 'src', problems: [problem] },
    { field: 'dst', problems: [problem] },
  ]);
}

/** Why `number` counts as an internal one, or undefined when it is an outside number (or none). */
function internalBecause(number: string | undefined, numbers: InternalNumbers): string | undefined {
  if (number === undefined) return undefined;
  if (numbers.isEmployee(number)) return "an employee's internal number";
  const short =
    DIGITS.test(number) &&
    number.length <= numbers.maxDigits &&
    !number.startsWith('00') &&
    !isE164WithoutPlus(number);
  return short ? `a short number (at most ${numbers.maxDigits} digits)` : undefined;
}

/**
 * Trunks often write international numbers as E.164 digits without the `+` (`4930123456`): with a large
 * PBX_INTERNAL_MAX_DIGITS those must still count as outside.
 */
function isE164WithoutPlus(digits: string): boolean {
  return parsePhoneNumberFromString(`+${digits}`)?.isValid() ?? false;
}

/** Disposition as the portal's status (table in docs/PBX.md). */
export function statusOf(
  disposition: Disposition,
  direction: Direction,
): { status: EndStatus; failedReason?: string } {
  switch (disposition) {
    case 'ANSWERED':
    case 'ANSWER':
      return { status: 'answered' };
    case 'NO ANSWER':
    case 'NOANSWER':
      return { status: 'missed' };
    case 'BUSY':
      return { status: 'busy' };
    case 'CANCEL':
      return { status: direction === 'inbound' ? 'missed' : 'cancelled' };
    default:
      return { status: 'failed', failedReason: disposition };
  }
}
