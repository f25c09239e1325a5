import { CallEvent } from '../../calls/call';
import { callerNumberOf, statusOf } from '../../pbx/adapters/freeswitch-cdr';
import { joinedPath, recordingUrlOf } from '../../pbx/adapters/recording-url';
import {
  CallOpening,
  EndOutcome,
  endedEvent,
  FollowedCall,
  followedCall,
  ringingNow,
  startedEvent,
  unansweredInbound,
} from '../followed-calls';
import { EslEvent, header } from './esl-message';

/** One call from or to outside: one Channel-Call-UUID (the a-leg's uuid, the callId), until its outside leg ends. */
export interface TrackedCall extends FollowedCall {
  /** Hang-up causes of phone legs that rang and were never bridged with the outside leg. */
  causes: string[];
  /** Recording candidates, most telling first when the call ends. */
  recordUrl?: string;
  recordPath?: string;
  recordFile?: string;
}

export function newCall(opening: CallOpening): TrackedCall {
  return { ...followedCall(opening), causes: [] };
}

/** The recording variables a leg's event carries (`record_url`, `record_path` + name, mod_callcenter's). */
export function noteRecording(call: TrackedCall, event: EslEvent): void {
  call.recordUrl ??= header(event, 'variable_record_url');
  const path = joinedPath(
    header(event, 'variable_record_path'),
    header(event, 'variable_record_name') ?? header(event, 'variable_record_file'),
  );
  call.recordPath ??= path ?? header(event, 'variable_cc_record_filename');
}

export function startedEventOf(call: TrackedCall, at: number, answerer?: string): CallEvent {
  const extensions = ringingNow(call, answerer);
  // An outbound call's card is the dialling phone's, until a transfer makes another phone ring.
  const extension = extensions[0] ?? (call.direction === 'outbound' ? call.caller : undefined);
  return startedEvent(call, at, extension, extensions);
}

/** The call.ended at the outside leg's hang-up (`outsideCause`: its Hangup-Cause). */
export function endedEventOf(
  call: TrackedCall,
  at: number,
  outsideCause: string,
  recordingTemplate: string | undefined,
): CallEvent {
  const outcome = outcomeOf(call, outsideCause);
  const file = call.recordUrl ?? call.recordPath ?? call.recordFile;
  const recordingUrl = outcome.status === 'answered' ? recordingUrlOf(file, recordingTemplate) : undefined;
  return endedEvent(call, at, outcome, recordingUrl);
}

function outcomeOf(call: TrackedCall, outsideCause: string): EndOutcome {
  if (call.answeredAt !== undefined) return { status: 'answered' };
  if (call.direction === 'inbound') return unansweredInbound(call.causes, 'USER_BUSY');
  // Never bridged with the phone: NORMAL_CLEARING here is no answer (statusOf with no talk time).
  return statusOf(outsideCause || 'NORMAL_CLEARING', false, 'outbound');
}

/**
 * The outside party's number, or `anonymous` when it is withheld (FreeSWITCH's placeholders, a masked number,
 * presentation prohibited) or is no number at all (SPEC §9: a followed call is still reported).
 */
export function outsideNumberOf(value: string | undefined, hidden: boolean): string {
  const number = callerNumberOf(value, hidden);
  return /^\+?\d+$/.test(number.replace(/[\s().-]/g, '')) ? number : 'anonymous';
}

/** Caller ID presentation prohibited: the caller profile's privacy flag, or a SIP Privacy header of `id`. */
export function hidden(event: EslEvent): boolean {
  const privacy = header(event, 'variable_sip_Privacy') ?? header(event, 'variable_sip_h_Privacy') ?? '';
  return header(event, 'Caller-Privacy-Hide-Number') === 'true' || /\bid\b/i.test(privacy);
}
