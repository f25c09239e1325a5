import { Transform } from 'class-transformer';
import { IsIn, IsNotEmpty, IsOptional, IsString, Length, Matches } from 'class-validator';
import { Direction, EndStatus } from '../../calls/call';
import { AdapterOutcome, badField, lowerText, optionalText, text, validateNative } from './native-record';
import { fromLocalTime, LOCAL_TIME, secondsAfter } from './pbx-time';

/**
 * Asterisk: the form a dialplan hang-up handler posts with `CURL()` (docs/PBX.md has the handler): the
 * CDR's own fields plus the two the dialplan knows and the CDR does not, `direction` and `extension`.
 */

const WHAT = 'Asterisk CDR';
const DIGITS = /^\d+$/;

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

  @Transform(lowerText)
  @IsIn(['inbound', 'outbound'], { message: 'direction must be inbound or outbound (set by the dialplan)' })
  direction: Direction;

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
  @Matches(DIGITS, { message: 'duration must be whole seconds' })
  duration: string;

  /** Talk time: seconds from answer to hang-up. */
  @Transform(text)
  @Matches(DIGITS, { message: 'billsec must be whole seconds' })
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

/** An Asterisk CDR as one `call.ended` carrying everything needed to register the call too. */
export function asteriskCdrToEvents(body: unknown, zone: string): AdapterOutcome {
  const cdr = validateNative(AsteriskCdrDto, body, WHAT);
  const inbound = cdr.direction === 'inbound';
  const startedAt = fromLocalTime(cdr.start, zone);
  if (!startedAt) throw badField(WHAT, 'start', `start ${cdr.start} is not a real moment in ${zone}`);
  const { status, failedReason } = statusOf(cdr.disposition, cdr.direction);
  const event = {
    event: 'call.ended',
    callId: cdr.linkedid,
    direction: cdr.direction,
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
  };
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
