import {
  CallDelivery,
  CallRecord,
  Direction,
  TranscriptMessage,
  TranscriptSide,
  withDelivery,
  withTranscript,
} from './call';
import { PortalParams } from './portal-commands';

/**
 * A call's transcript (SPEC §12), pure: when it is due, whose side each channel is, the service's segments
 * as the portal's messages, and how each answer moves it on. The last step of a call's history.
 */

/** Transcript steps wait behind everything else, missed-call tasks too (`deliveryPriority`). */
export const TRANSCRIPT_PRIORITY = 3;

/** Who speaks on a two-channel recording's first channel (TRANSCRIBE_FIRST_CHANNEL). */
export type FirstChannel = 'caller' | 'callee';

/** One segment of the service's verbose_json answer (seconds from the start of the file). */
export interface TranscriptSegment {
  start: number;
  end: number;
  text: string;
}

/**
 * Each channel's side: the employee is `User`, the outside party `Client`. The caller is the outside party
 * of an inbound call and the employee of an outbound one; the first channel is the caller's unless
 * TRANSCRIBE_FIRST_CHANNEL says callee. One channel (the voices mixed): everything is `Client`.
 */
export function channelSides(
  channels: 1 | 2,
  direction: Direction | undefined,
  first: FirstChannel,
): TranscriptSide[] {
  if (channels === 1) return ['Client'];
  const caller: TranscriptSide = direction === 'outbound' ? 'User' : 'Client';
  const callee: TranscriptSide = caller === 'User' ? 'Client' : 'User';
  return first === 'caller' ? [caller, callee] : [callee, caller];
}

/**
 * The messages of every channel's segments: whole seconds (the start rounded down, the stop up, the stop at
 * least 1 and at least the start), blank ones dropped, sorted by start (a channel's own order kept on ties).
 */
export function messagesFromSegments(
  channels: { side: TranscriptSide; segments: readonly TranscriptSegment[] }[],
): TranscriptMessage[] {
  const messages = channels.flatMap(({ side, segments }) =>
    segments.flatMap((segment) => {
      const text = typeof segment.text === 'string' ? segment.text.trim() : '';
      if (!text) return [];
      const start = Math.max(0, Math.floor(Number(segment.start) || 0));
      const stop = Math.max(1, start, Math.ceil(Number(segment.end) || 0));
      return [{ SIDE: side, START_TIME: start, STOP_TIME: stop, MESSAGE: text }];
    }),
  );
  return messages.sort((a, b) => a.START_TIME - b.START_TIME);
}

/**
 * Whether the call's transcript starts once its recording is attached: answered, and the bridge holds the
 * file (fetched or pushed; a RECORD_URL it never had is not transcribed).
 */
export function withTranscriptDue(call: CallRecord): CallRecord {
  const held = call.recording.file?.bytes !== undefined;
  if (call.transcript || !held || call.party.ended?.status !== 'answered') return call;
  return { ...call, transcript: { state: 'pending' } };
}

/** Whether the held recording must stay in the store: the transcript has no messages yet. */
export function transcriptNeedsFile(call: CallRecord): boolean {
  return call.transcript?.state === 'pending' && call.transcript.messages === undefined;
}

/** The transcript's step once the call is finished and its recording attached. */
export function transcriptStep(call: CallRecord): CallDelivery['nextStep'] {
  const transcript = call.transcript;
  if (!call.portal.finished || !call.portal.callId || transcript?.state !== 'pending') return undefined;
  if (!transcript.messages) return 'transcribe';
  return (transcript.sends ?? 0) > (transcript.sendsCleared ?? 0) ? 'findTranscript' : 'attachTranscription';
}

export function isTranscriptStep(step: string | undefined): boolean {
  return step === 'transcribe' || step === 'attachTranscription' || step === 'findTranscript';
}

export function attachTranscriptionParams(call: CallRecord): PortalParams {
  return { CALL_ID: call.portal.callId, MESSAGES: call.transcript?.messages ?? [] };
}

export function findTranscriptParams(call: CallRecord): PortalParams {
  return { FILTER: { CALL_ID: call.portal.callId } };
}

/** The service's answer is stored: the messages to attach, or `none` when the recording had no speech. */
export function transcribed(call: CallRecord, messages: TranscriptMessage[]): CallRecord {
  const done = withTranscript(call, messages.length > 0 ? { messages } : { state: 'none' });
  return withDelivery(done, { retryAt: undefined, lastError: keptError(call) });
}

/** The service is being asked until `until` (a crash mid-request asks again then). */
export function transcribing(call: CallRecord, until: number, now: number): CallRecord {
  const transcript = { firstTriedAt: call.transcript?.firstTriedAt ?? now };
  return withDelivery(withTranscript(call, transcript), { retryAt: until });
}

/**
 * The service is down, overloaded or failing: asked again after `delayMs` (its Retry-After, else the
 * backoff) until `waitMs` after the first try, then given up.
 */
export function transcriptRetry(
  call: CallRecord,
  reason: string,
  now: number,
  waitMs: number,
  delayMs?: number,
): CallRecord {
  const tries = (call.transcript?.tries ?? 0) + 1;
  const until = (call.transcript?.firstTriedAt ?? now) + waitMs;
  if (now >= until) {
    return transcriptFailed(call, `transcript: ${reason}; not done within TRANSCRIBE_WAIT_SEC`);
  }
  const backoff = Math.min(300_000, 1000 * 2 ** Math.min(tries - 1, 20));
  const retryAt = Math.min(now + (delayMs ?? backoff), until);
  return withDelivery(withTranscript(call, { tries }), {
    retryAt,
    lastError: `transcript: ${reason} (retrying)`,
  });
}

/** Given up (a file the service refuses, or the wait ran out): the call stays finished, with the reason. */
export function transcriptFailed(call: CallRecord, reason: string): CallRecord {
  return withDelivery(withTranscript(call, { state: 'failed' }), { retryAt: undefined, lastError: reason });
}

/** The attach is about to be sent: counted first, so a lost answer is followed by a look, not a repeat. */
export function countTranscriptSend(call: CallRecord): CallRecord {
  return withTranscript(call, { sends: (call.transcript?.sends ?? 0) + 1 });
}

/** The portal has the transcript: its TRANSCRIPT_ID is kept. */
export function transcriptAttached(call: CallRecord, id: number | undefined): CallRecord {
  return withTranscript(call, { state: 'attached', id });
}

/** The attaches sent so far made no transcript: the next step attaches again. */
export function transcriptSendsCleared(call: CallRecord): CallRecord {
  return withTranscript(call, { sendsCleared: call.transcript?.sends ?? 0 });
}

/** The TRANSCRIPT_ID of the attach's answer (`{"TRANSCRIPT_ID": n}`, or the bare number). */
export function attachedTranscriptId(result: unknown): number | undefined {
  const value =
    typeof result === 'object' && result !== null
      ? (result as Record<string, unknown>).TRANSCRIPT_ID
      : result;
  return toId(value);
}

/**
 * The TRANSCRIPT_ID `voximplant.statistic.get` shows for the call (its rows, or `{items}`), or undefined:
 * no transcript arrived. Only a row of this very call counts.
 */
export function foundTranscriptId(call: CallRecord, result: unknown): number | undefined {
  const rows = Array.isArray(result) ? result : (result as { items?: unknown } | undefined)?.items;
  if (!Array.isArray(rows)) return undefined;
  for (const row of rows as Record<string, unknown>[]) {
    if (row?.CALL_ID !== undefined && row.CALL_ID !== call.portal.callId) continue;
    const id = toId(row?.TRANSCRIPT_ID);
    if (id !== undefined) return id;
  }
  return undefined;
}

/** A reason the call kept from an earlier step stays; a transcript retry's note goes. */
function keptError(call: CallRecord): string | undefined {
  const error = call.delivery.lastError;
  return error?.startsWith('transcript: ') ? undefined : error;
}

function toId(value: unknown): number | undefined {
  if (value === null || value === undefined || value === '' || value === 0 || value === '0') return undefined;
  const id = Number(value);
  return Number.isFinite(id) ? id : undefined;
}
