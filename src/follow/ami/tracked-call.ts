import { CallEvent } from '../../calls/call';
import { recordingUrlOf } from '../../pbx/adapters/recording-url';
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
import { LineNotes } from './call-lines';
import { Recording, recordingFileOf } from './recordings';

/** One call from or to outside: one Linkedid (the callId), followed until its outside party hangs up. */
export interface TrackedCall extends FollowedCall {
  /** Phones a `call.started` of this call named: a phone ringing later gets a later one (its card). */
  announced: Set<string>;
  /** Dial outcomes (DialEnd DialStatus) of legs that did not answer. */
  outcomes: string[];
  recording: Recording;
  /** What the events said of the call's line so far (`call.line` is chosen from them). */
  lineNotes: LineNotes;
}

export function newCall(opening: CallOpening, recording: Recording, lineNotes: LineNotes): TrackedCall {
  return { ...followedCall(opening), announced: new Set(), outcomes: [], recording, lineNotes };
}

/** A `call.started` naming the phones ringing now (or the one that answered an unannounced call). */
export function startedEventOf(call: TrackedCall, at: number, answerer?: string): CallEvent {
  const extensions = ringingNow(call, answerer);
  for (const named of extensions) call.announced.add(named);
  const extension = call.direction === 'outbound' ? call.caller : extensions[0];
  return startedEvent(call, at, extension, call.direction === 'inbound' ? extensions : []);
}

export function endedEventOf(
  call: TrackedCall,
  at: number,
  options: { recordingTemplate?: string; timeZone?: string },
): CallEvent {
  const outcome = outcomeOf(call);
  const recordingUrl =
    outcome.status === 'answered'
      ? recordingUrlOf(recordingFileOf(call.recording), options.recordingTemplate, {
          at: call.startedAt,
          timeZone: options.timeZone,
        })
      : undefined;
  return endedEvent(call, at, outcome, recordingUrl);
}

/** Answered from the first answer; else what the dials ended with (DialEnd's DialStatus). */
function outcomeOf(call: TrackedCall): EndOutcome {
  if (call.answeredAt !== undefined) return { status: 'answered' };
  if (call.direction === 'inbound') return unansweredInbound(call.outcomes, 'BUSY');
  const last = call.outcomes.at(-1);
  switch (last) {
    case 'BUSY':
      return { status: 'busy' };
    case 'NOANSWER':
      return { status: 'missed' };
    case undefined:
    case 'CANCEL':
      return { status: 'cancelled' };
    default:
      return { status: 'failed', failedReason: last };
  }
}
