import { Transform } from 'class-transformer';
import { IsIn, IsOptional, IsString, Length, Matches } from 'class-validator';
import { Direction } from '../../calls/call';
import { crmCallIdOf } from '../../calls/click-match';
import { asteriskCdrToEvents, directionOf, extensionOfChannel, InternalNumbers } from './asterisk-cdr';
import {
  AdapterOutcome,
  badField,
  isRecord,
  lowerText,
  optionalText,
  OptionalText,
  text,
  validateNative,
} from './native-record';
import { fromLocalTime, LOCAL_TIME, now } from './pbx-time';

/**
 * Asterisk while the call is live: a dialplan that posts `event=ringing` just before `Dial()`/`Queue()`
 * (naming what it dials: `dial`, or a queue's `members`) pops the card for everyone it rings, and one that
 * posts `event=answered` from Dial's `U()` subroutine (or a queue's) moves it to whoever picked up. Without
 * `event` the post is the hang-up handler's CDR (`asterisk-cdr.ts`). docs/PBX.md has the dialplan.
 */

const WHAT = 'Asterisk live event';
const LIVE_EVENTS = ['ringing', 'answered'] as const;
/** A ring group or queue larger than this is shown to its first 50 members (docs/API.md). */
const MAX_RINGING = 50;

export class AsteriskLiveDto {
  @Transform(lowerText)
  @IsIn(LIVE_EVENTS, { message: 'event must be ringing or answered (or left out for the CDR)' })
  event: (typeof LIVE_EVENTS)[number];

  @Transform(text)
  @IsString({ message: 'linkedid must be the call linkedid, ${CDR(linkedid)}' })
  @Length(1, 128)
  linkedid: string;

  @Transform(lowerText)
  @IsOptional()
  @IsIn(['inbound', 'outbound'], { message: 'direction must be inbound or outbound, or left out' })
  direction?: Direction;

  @OptionalText()
  src?: string;

  @OptionalText()
  dst?: string;

  @OptionalText()
  extension?: string;

  /** What Dial() dials: `PJSIP/101&PJSIP/102&Local/103@from-internal,30,tT` (options after the comma ignored). */
  @OptionalText()
  dial?: string;

  /** A queue's members, as `${QUEUE_MEMBER_LIST(queue)}` writes them: `PJSIP/101,PJSIP/102`. */
  @OptionalText()
  members?: string;

  /** On `answered`: the channel that picked up (`${CHANNEL}` in Dial's U() subroutine, `PJSIP/102-0000001b`). */
  @OptionalText()
  dstchannel?: string;

  /** When it happened, the PBX's local time (`${STRFTIME(,,%Y-%m-%d %H:%M:%S)}`); else the receipt time. */
  @Transform(optionalText)
  @IsOptional()
  @Matches(LOCAL_TIME, { message: 'at must be YYYY-MM-DD HH:MM:SS (the PBX local time)' })
  at?: string;

  /** Click-to-call: `${CRM_CALL_ID}`, the portal's CALL_ID the dialer set on the call (empty: none). */
  @OptionalText()
  CRM_CALL_ID?: string;
}

/** One post to /v1/pbx/asterisk: a live event when it names one, else the hang-up handler's CDR. */
export function asteriskPostToEvents(
  body: unknown,
  zone: string,
  numbers: InternalNumbers,
  recordingTemplate?: string,
): AdapterOutcome {
  if (isRecord(body) && body.event !== undefined && body.event !== '') {
    return asteriskLiveToEvents(body, zone, numbers);
  }
  return asteriskCdrToEvents(body, zone, numbers, recordingTemplate);
}

export function asteriskLiveToEvents(body: unknown, zone: string, numbers: InternalNumbers): AdapterOutcome {
  const live = validateNative(AsteriskLiveDto, body, WHAT);
  const at = live.at ? fromLocalTime(live.at, zone) : now(zone);
  if (!at) throw badField(WHAT, 'at', `at ${live.at} is not a real moment in ${zone}`);
  return live.event === 'ringing' ? ringing(live, at, numbers) : answered(live, at, numbers);
}

function ringing(live: AsteriskLiveDto, at: string, numbers: InternalNumbers): AdapterOutcome {
  if (!live.dst) throw badField(WHAT, 'dst', 'dst must be the number dialled, ${CDR(dst)} or ${EXTEN}');
  const { direction, directionInferred } = directionOf({ ...live, dst: live.dst }, numbers);
  const inbound = direction === 'inbound';
  const group = ringingExtensions(live, numbers);
  const extension = live.extension ?? group[0] ?? (inbound ? live.dst : live.src);
  const extensions = [...new Set([extension, ...group])].slice(0, MAX_RINGING);
  return {
    events: [
      {
        event: 'call.started',
        callId: live.linkedid,
        direction,
        phoneNumber: inbound ? live.src : live.dst,
        extension,
        ...(extensions.length > 1 ? { extensions } : {}),
        at,
        crmCallId: crmCallIdOf(live.CRM_CALL_ID),
      },
    ],
    sources: {
      callId: 'linkedid',
      phoneNumber: inbound ? 'src' : 'dst',
      extension: live.extension ? 'extension' : live.dial ? 'dial' : 'members',
      extensions: live.dial ? 'dial' : 'members',
      at: 'at',
    },
    directionInferred,
  };
}

/** The internal numbers a Dial() string or a queue's member list rings; trunks and outside numbers left out. */
export function ringingExtensions(
  live: Pick<AsteriskLiveDto, 'dial' | 'members'>,
  numbers: InternalNumbers,
): string[] {
  const targets = [...(live.dial?.split(',')[0].split('&') ?? []), ...(live.members?.split(/[,&]/) ?? [])];
  const found = targets.map((target) => extensionOfChannel(target.trim(), numbers));
  return [...new Set(found.filter((number): number is string => number !== undefined))];
}

function answered(live: AsteriskLiveDto, at: string, numbers: InternalNumbers): AdapterOutcome {
  const extension = extensionOfChannel(live.dstchannel, numbers) ?? live.extension;
  if (!extension) {
    throw badField(
      WHAT,
      'dstchannel',
      "dstchannel must name the employee's channel that answered (PJSIP/102-0000001b), or extension the number",
    );
  }
  return {
    events: [
      {
        event: 'call.answered',
        callId: live.linkedid,
        extension,
        at,
        crmCallId: crmCallIdOf(live.CRM_CALL_ID),
      },
    ],
    sources: { callId: 'linkedid', extension: live.dstchannel ? 'dstchannel' : 'extension', at: 'at' },
  };
}
