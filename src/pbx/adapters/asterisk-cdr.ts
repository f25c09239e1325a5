import { Transform } from 'class-transformer';
import { IsIn, IsOptional, IsString, Length, Matches } from 'class-validator';
import { Direction, EndStatus } from '../../calls/call';
import { crmCallIdOf } from '../../calls/click-match';
import { internalBecause, InternalNumbers } from './internal-numbers';
import {
  AdapterOutcome,
  badField,
  endedAndAnswered,
  lowerText,
  nativeBadRequest,
  optionalText,
  OptionalText,
  RequiredText,
  text,
  validateNative,
} from './native-record';
import { fromLocalTime, LOCAL_TIME, secondsAfter } from './pbx-time';
import { recordingUrlOf } from './recording-url';

export type { InternalNumbers } from './internal-numbers';

/**
 * Asterisk: the form a dialplan hang-up handler posts with `CURL()` (docs/PBX.md has the handler): the
 * CDR's own fields plus the two the dialplan knows and the CDR does not, `direction` and `extension`.
 * Without `direction` it is inferred from which of `src` and `dst` is an employee's internal number.
 */

const WHAT = 'Asterisk CDR';
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

  @OptionalText()
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
  @OptionalText()
  src?: string;

  /** The number dialled: the outside number of an outbound call. */
  @RequiredText()
  dst: string;

  /** The employee's internal number when `src`/`dst` is not it (an inbound call's dst is often the DID). */
  @OptionalText()
  extension?: string;

  /** `${CDR(did)}` (FreePBX): the DID an inbound call came in on, its line (docs/API.md "Lines"). */
  @OptionalText()
  did?: string;

  /** `${CDR(outbound_cnum)}` (FreePBX): the caller ID an outbound route presented, its line (docs/API.md "Lines"). */
  @OptionalText()
  outbound_cnum?: string;

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
  @OptionalText()
  recording?: string;

  /**
   * `${CDR(dstchannel)}`: the channel that took the call (`PJSIP/201-0000001a`, `SIP/201-…`,
   * `Local/201@from-queue-…;1`); on an answered inbound call, whoever picked up (ring group, queue, transfer).
   */
  @OptionalText()
  dstchannel?: string;

  /** `${CDR(answer)}`: when the call was answered, the PBX's local time like `start`. */
  @Transform(optionalText)
  @IsOptional()
  @Matches(LOCAL_TIME, { message: 'answer must be YYYY-MM-DD HH:MM:SS, as ${CDR(answer)} writes it' })
  answer?: string;

  /** `${CDR(recordingfile)}` (FreePBX): the recording's file name, made a URL by ASTERISK_RECORDING_URL. */
  @OptionalText()
  recordingfile?: string;

  /** `${MIXMONITOR_FILENAME}`: the file MixMonitor wrote, made a URL by ASTERISK_RECORDING_URL. */
  @OptionalText()
  MIXMONITOR_FILENAME?: string;

  /** `${MONITOR_FILENAME}` (Monitor(), older dialplans): the same. */
  @OptionalText()
  MONITOR_FILENAME?: string;

  /**
   * Click-to-call: `${CRM_CALL_ID}`, the portal's CALL_ID the dialer set on the call (a channel variable,
   * inherited by the outbound leg; empty or malformed: none). The call is then finished, never registered.
   */
  @OptionalText()
  CRM_CALL_ID?: string;
}

/**
 * A FreePBX CDR's line (docs/API.md "Lines"): `did` (the inbound route's DID) for an inbound call,
 * `outbound_cnum` (the caller ID the outbound route presented) for an outbound one. The posted CDR route and
 * the CDR ledger follower both read it here.
 */
export function cdrLineOf(
  cdr: { did?: string; outbound_cnum?: string },
  inbound: boolean,
): string | undefined {
  return (inbound ? cdr.did : cdr.outbound_cnum) || undefined;
}

/**
 * An Asterisk CDR as one `call.ended` carrying everything needed to register the call too; an answered call
 * gets a `call.answered` first (who picked up: `dstchannel`, else the call's employee), so the portal's
 * finish names the answerer. `recordingTemplate` is ASTERISK_RECORDING_URL.
 */
export function asteriskCdrToEvents(
  body: unknown,
  zone: string,
  numbers: InternalNumbers,
  recordingTemplate?: string,
): AdapterOutcome {
  const cdr = validateNative(AsteriskCdrDto, body, WHAT);
  const { direction, directionInferred } = directionOf(cdr, numbers);
  const inbound = direction === 'inbound';
  const startedAt = fromLocalTime(cdr.start, zone);
  if (!startedAt) throw badField(WHAT, 'start', `start ${cdr.start} is not a real moment in ${zone}`);
  const { status, failedReason } = statusOf(cdr.disposition, direction);
  const extension = cdr.extension ?? (inbound ? cdr.dst : cdr.src);
  const recordingFile = cdr.recordingfile ?? cdr.MIXMONITOR_FILENAME ?? cdr.MONITOR_FILENAME;
  const event = {
    event: 'call.ended',
    callId: cdr.linkedid,
    direction,
    phoneNumber: inbound ? cdr.src : cdr.dst,
    extension,
    startedAt,
    at: secondsAfter(startedAt, Number(cdr.duration)),
    durationSec: Number(cdr.billsec),
    status,
    failedReason,
    recordingUrl: cdr.recording ?? recordingUrlOf(recordingFile, recordingTemplate),
    crmCallId: crmCallIdOf(cdr.CRM_CALL_ID),
    line: cdrLineOf(cdr, inbound),
  };
  const answerer =
    status === 'answered'
      ? ((inbound ? extensionOfChannel(cdr.dstchannel, numbers) : undefined) ??
        (internalBecause(extension, numbers) ? extension : undefined))
      : undefined;
  return {
    events: endedAndAnswered(event, answerer, () => answeredAt(cdr, startedAt, zone)),
    sources: {
      callId: 'linkedid',
      crmCallId: 'CRM_CALL_ID',
      phoneNumber: inbound ? 'src' : 'dst',
      extension: cdr.extension ? 'extension' : inbound ? 'dst' : 'src',
      line: inbound ? 'did' : 'outbound_cnum',
      at: 'duration',
      durationSec: 'billsec',
      status: 'disposition',
      recordingUrl: cdr.recording
        ? 'recording'
        : cdr.recordingfile
          ? 'recordingfile'
          : cdr.MIXMONITOR_FILENAME
            ? 'MIXMONITOR_FILENAME'
            : 'MONITOR_FILENAME',
    },
    directionInferred,
  };
}

/**
 * The internal number in a channel name: `PJSIP/201-0000001a`, `SIP/201-00000003`, `IAX2/201-1234`,
 * `Local/201@from-queue-00000012;1`. A trunk's channel (`PJSIP/carrier-0000001b`) or an outside number is
 * no employee: undefined.
 */
export function extensionOfChannel(
  channel: string | undefined,
  numbers: InternalNumbers,
): string | undefined {
  const resource = channel?.match(/^[A-Za-z0-9_]+\/(.+)$/)?.[1];
  if (!resource) return undefined;
  const name = resource
    .replace(/;\d+$/, '')
    .replace(/-[0-9a-f]+$/i, '')
    .replace(/^sip:/i, '')
    .split('@')[0]
    .split('/')[0];
  return internalBecause(name, numbers) ? name : undefined;
}

/** When the call was answered: `answer`, else `start` plus the ringing time (`duration − billsec`). */
function answeredAt(cdr: AsteriskCdrDto, startedAt: string, zone: string): string {
  const answer = cdr.answer ? fromLocalTime(cdr.answer, zone) : undefined;
  if (cdr.answer && !answer) {
    throw badField(WHAT, 'answer', `answer ${cdr.answer} is not a real moment in ${zone}`);
  }
  return answer ?? secondsAfter(startedAt, Math.max(0, Number(cdr.duration) - Number(cdr.billsec)));
}

/** The direction the post names, else inferred (`inferDirection`). */
export function directionOf(
  post: Pick<AsteriskCdrDto, 'direction' | 'src' | 'dst'>,
  numbers: InternalNumbers,
): { direction: Direction; directionInferred?: string } {
  return post.direction ? { direction: post.direction } : inferDirection(post, numbers);
}

/**
 * Asterisk's CDR has no direction: the side with an employee's internal number placed (src) or took (dst)
 * the call. A call with both sides internal, or neither, cannot be told and is a 400 naming both.
 */
export function inferDirection(
  cdr: Pick<AsteriskCdrDto, 'src' | 'dst'>,
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
