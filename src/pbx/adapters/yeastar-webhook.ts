import { Transform, Type } from 'class-transformer';
import {
  ArrayMinSize,
  IsArray,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Matches,
  Min,
  ValidateNested,
} from 'class-validator';
import { Direction, EndStatus } from '../../calls/call';
import {
  AdapterOutcome,
  badField,
  ignoredPost,
  isRecord,
  lowerText,
  OptionalText,
  RequiredText,
  text,
  validateNative,
} from './native-record';
import { fromLocalTime, LOCAL_TIME, now, secondsAfter } from './pbx-time';
import { recordingUrlOf } from './recording-url';

/**
 * Yeastar P-Series webhooks (Integrations › API › Webhook Event Push): `{"type": <event id>, "sn": …,
 * "msg": "<the event as a JSON string>"}`. 30011 (call state changed) starts and answers a call while it
 * rings (a ring group: every member ringing at once), 30013 (call transfer) and 30014 (call forward) carry
 * the same members and move the card to whoever talks now, 30012 (new CDR) ends it; every other event is
 * acknowledged and stored nowhere.
 */

const WHAT = 'Yeastar webhook';
export const CALL_STATE_CHANGED = 30011;
export const NEW_CDR = 30012;
export const CALL_TRANSFER = 30013;
export const CALL_FORWARD = 30014;
/** The events whose `msg` lists the call's members (P-Series: the same Call_Info for all three). */
const MEMBER_EVENTS: Record<number, string> = {
  [CALL_STATE_CHANGED]: '30011 (Call State Changed)',
  [CALL_TRANSFER]: '30013 (Call Transfer)',
  [CALL_FORWARD]: '30014 (Call Forward)',
};

/** Loose JSON number: Yeastar firmware writes some numbers as strings. */
const toInt = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value;

export class YeastarWebhookDto {
  @Transform(toInt)
  @IsInt({ message: 'type must be the event id, e.g. 30012' })
  type: number;

  @OptionalText()
  sn?: string;

  /** The event itself, as a JSON string (as documented) or an object. */
  @IsNotEmpty({ message: 'msg must be the event as a JSON string' })
  msg: unknown;
}

const CDR_STATUSES = [
  'ANSWERED',
  'ANSWERD',
  'NO ANSWER',
  'BUSY',
  'FAILED',
  'VOICEMAIL',
  'ABANDONED',
] as const;
type CdrStatus = (typeof CDR_STATUSES)[number];

/** Event 30012, New CDR. */
export class YeastarCdrDto {
  @Transform(text)
  @IsString()
  @Length(1, 128)
  call_id: string;

  @Transform(text)
  @Matches(LOCAL_TIME, { message: 'time_start must be YYYY-MM-DD HH:MM:SS (the PBX local time)' })
  time_start: string;

  @RequiredText()
  call_from: string;

  @RequiredText()
  call_to: string;

  /** Seconds from start to end. */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  call_duration: number;

  /** Seconds from answer to end. */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  talk_duration: number;

  @Transform(({ value }) => (typeof value === 'string' ? value.trim().toUpperCase() : value))
  @IsIn(CDR_STATUSES, { message: `status must be one of ${CDR_STATUSES.join(', ')}` })
  status: CdrStatus;

  @Transform(lowerText)
  @IsIn(['inbound', 'outbound', 'internal'], { message: 'type must be Inbound, Outbound or Internal' })
  type: Direction | 'internal';

  /**
   * A file name on the PBX (its API serves it): attached when the PBX sends a full URL, or through
   * YEASTAR_RECORDING_URL (where the recordings are served, e.g. synced to a web server).
   */
  @OptionalText()
  recording?: string;

  /** The number the caller dialled (inbound): the call's line (docs/API.md "Lines"). */
  @OptionalText()
  did_number?: string;
}

const MEMBER_STATUSES = ['ALERT', 'RING', 'EARLYMEDIA', 'ANSWERED', 'ANSWER', 'HOLD', 'BYE'] as const;
const RINGING = ['ALERT', 'RING', 'EARLYMEDIA'];
const TALKING = ['ANSWERED', 'ANSWER', 'HOLD'];

export class YeastarExtensionMemberDto {
  @RequiredText()
  number: string;

  @Transform(({ value }) => (typeof value === 'string' ? value.trim().toUpperCase() : value))
  @IsIn(MEMBER_STATUSES, { message: `member_status must be one of ${MEMBER_STATUSES.join(', ')}` })
  member_status: string;
}

export class YeastarTrunkMemberDto {
  @RequiredText()
  from: string;

  @RequiredText()
  to: string;

  @Transform(({ value }) => (typeof value === 'string' ? value.trim().toUpperCase() : value))
  @IsIn(MEMBER_STATUSES, { message: `member_status must be one of ${MEMBER_STATUSES.join(', ')}` })
  member_status: string;
}

export class YeastarMemberDto {
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => YeastarExtensionMemberDto)
  extension?: YeastarExtensionMemberDto;

  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => YeastarTrunkMemberDto)
  inbound?: YeastarTrunkMemberDto;

  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => YeastarTrunkMemberDto)
  outbound?: YeastarTrunkMemberDto;
}

/** Event 30011, Call State Changed: who takes part in the call, and in what state each one is. */
export class YeastarCallStateDto {
  @Transform(text)
  @IsString()
  @Length(1, 128)
  call_id: string;

  @IsArray()
  @ArrayMinSize(1)
  @ValidateNested({ each: true })
  @Type(() => YeastarMemberDto)
  members: YeastarMemberDto[];
}

/** `recordingTemplate` is YEASTAR_RECORDING_URL: where the CDR's recording file names are served. */
export function yeastarWebhookToEvents(
  body: unknown,
  zone: string,
  recordingTemplate?: string,
): AdapterOutcome {
  const envelope = validateNative(YeastarWebhookDto, body, WHAT);
  const members = MEMBER_EVENTS[envelope.type];
  if (envelope.type !== NEW_CDR && !members) {
    return ignoredPost(`event type ${envelope.type} carries no call record`);
  }
  const msg = messageOf(envelope.msg);
  return envelope.type === NEW_CDR
    ? cdrToEvents(msg, zone, recordingTemplate)
    : callStateToEvents(msg, zone, members);
}

function messageOf(msg: unknown): unknown {
  if (isRecord(msg)) return msg;
  if (typeof msg === 'string') {
    try {
      return JSON.parse(msg);
    } catch {
      // Falls through to the 400 below.
    }
  }
  throw badField(WHAT, 'msg', 'msg must be the event as a JSON string');
}

/** A finished call: one `call.ended` with all a CDR-only call needs. */
function cdrToEvents(msg: unknown, zone: string, recordingTemplate?: string): AdapterOutcome {
  const cdr = validateNative(YeastarCdrDto, msg, `${WHAT} 30012 (New CDR)`, 'msg');
  if (cdr.type === 'internal') {
    return ignoredPost(`internal call ${cdr.call_id}: no outside party for the CRM`);
  }
  const inbound = cdr.type === 'inbound';
  const startedAt = fromLocalTime(cdr.time_start, zone);
  if (!startedAt) {
    throw badField(WHAT, 'msg.time_start', `time_start ${cdr.time_start} is not a real moment in ${zone}`);
  }
  const { status, failedReason } = cdrStatusOf(cdr.status);
  const event = {
    event: 'call.ended',
    callId: cdr.call_id,
    direction: cdr.type,
    phoneNumber: inbound ? cdr.call_from : cdr.call_to,
    extension: inbound ? cdr.call_to : cdr.call_from,
    startedAt,
    at: secondsAfter(startedAt, cdr.call_duration),
    durationSec: cdr.talk_duration,
    status,
    failedReason,
    recordingUrl: recordingUrlOf(cdr.recording, recordingTemplate),
    line: inbound ? cdr.did_number : undefined,
  };
  return {
    events: [event],
    sources: {
      callId: 'msg.call_id',
      phoneNumber: inbound ? 'msg.call_from' : 'msg.call_to',
      extension: inbound ? 'msg.call_to' : 'msg.call_from',
      at: 'msg.call_duration',
      durationSec: 'msg.talk_duration',
      status: 'msg.status',
      recordingUrl: 'msg.recording',
      line: 'msg.did_number',
    },
  };
}

/** CDR status as the portal's status (table in docs/PBX.md). */
export function cdrStatusOf(status: CdrStatus): { status: EndStatus; failedReason?: string } {
  switch (status) {
    case 'ANSWERED':
    case 'ANSWERD':
      return { status: 'answered' };
    case 'BUSY':
      return { status: 'busy' };
    case 'FAILED':
      return { status: 'failed', failedReason: 'FAILED' };
    default:
      // NO ANSWER, VOICEMAIL (the caller left a message nobody answered), ABANDONED: a call to call back.
      return { status: 'missed' };
  }
}

/**
 * A call while it rings: `call.started` (the portal pops the call card) once an employee's phone is part
 * of it, with every extension ringing at once (a ring group or queue) as `extensions`; `call.answered` once
 * an employee talks. Yeastar repeats states; the bridge keeps the first start per call and the first answer
 * per employee (idempotency), so an answer by another employee (a transfer, 30013; a forward, 30014; or a
 * later 30011) moves the card. A state event carries no time: the bridge's receipt time stands in.
 */
function callStateToEvents(msg: unknown, zone: string, what: string): AdapterOutcome {
  const state = validateNative(YeastarCallStateDto, msg, `${WHAT} ${what}`, 'msg');
  const extensions = state.members.flatMap((member) => (member.extension ? [member.extension] : []));
  const inbound = state.members.find((member) => member.inbound)?.inbound;
  const outbound = state.members.find((member) => member.outbound)?.outbound;
  const trunk = inbound ?? outbound;
  if (!trunk) return ignoredPost(`internal call ${state.call_id}: no outside party for the CRM`);
  const live = [...extensions, trunk].some((member) =>
    [...RINGING, ...TALKING].includes(member.member_status),
  );
  if (!live) return ignoredPost(`call ${state.call_id} hung up: the 30012 CDR ends it`);
  const present = extensions.filter((member) => member.member_status !== 'BYE');
  const employee = present[0];
  if (!employee) return ignoredPost(`call ${state.call_id}: no employee's phone rings yet`);

  const at = now(zone);
  const answered = inbound
    ? answererOf(extensions)
    : TALKING.includes(trunk.member_status)
      ? employee
      : undefined;
  // Every phone of a ring group or queue rings at once: each is shown the card (docs/API.md).
  const group = inbound ? [...new Set(present.map((member) => member.number))] : [];
  // The inbound trunk member's callee is the number dialled, the line; unless it names one of the call's
  // own phones (a firmware listing the extension there).
  const line = inbound && !extensions.some((member) => member.number === inbound.to) ? inbound.to : undefined;
  const events: Record<string, unknown>[] = [
    {
      event: 'call.started',
      callId: state.call_id,
      direction: inbound ? 'inbound' : 'outbound',
      phoneNumber: inbound ? trunk.from : trunk.to,
      extension: employee.number,
      ...(group.length > 1 ? { extensions: group.slice(0, 50) } : {}),
      ...(line ? { line } : {}),
      at,
    },
  ];
  if (answered) {
    events.push({ event: 'call.answered', callId: state.call_id, extension: answered.number, at });
  }
  return {
    events,
    sources: {
      callId: 'msg.call_id',
      phoneNumber: inbound ? 'msg.members[].inbound.from' : 'msg.members[].outbound.to',
      extension: 'msg.members[].extension.number',
      extensions: 'msg.members[].extension.number',
      line: 'msg.members[].inbound.to',
    },
  };
}

/**
 * The employee talking on an inbound call: the extension listed as talking (ANSWER/ANSWERED), else the one
 * holding it; should several be (an attended transfer being completed), the last listed.
 */
function answererOf(extensions: YeastarExtensionMemberDto[]): YeastarExtensionMemberDto | undefined {
  const talking = extensions.filter((member) => ['ANSWERED', 'ANSWER'].includes(member.member_status));
  const holding = extensions.filter((member) => member.member_status === 'HOLD');
  return talking[talking.length - 1] ?? holding[holding.length - 1];
}
