import { createHash } from 'crypto';
import { LineRule } from '../common/lines';

/** The call as the bridge knows it: what the PBX said, and how far delivery to the portal has come. */

export type CallEventName = 'call.started' | 'call.answered' | 'call.ended';
export type Direction = 'inbound' | 'outbound';
export type EndStatus = 'answered' | 'missed' | 'busy' | 'declined' | 'cancelled' | 'failed';
/** `ignored`: a call of a line with `"report": false` (LINES, docs/API.md "Lines"): stored, never sent to the portal. */
export type CallState = 'queued' | 'registered' | 'finished' | 'failed' | 'ignored';
/**
 * What delivery must do next; `wait-start` is a call.ended held until its call.started arrives. `show` and
 * `hide` move the call card (`call-card.ts`): to a ring group, to whoever answered, and closed where a finish
 * does not close it.
 */
export type DeliveryStep =
  | 'register'
  | 'show'
  | 'hide'
  | 'finish'
  | 'attachRecord'
  | 'uploadRecord'
  | 'fetchRecord'
  | 'wait-start'
  // Missed-call tasks (missed-call-task.ts): add the task, look for one an unanswered add made, complete it.
  | 'addTask'
  | 'findTask'
  | 'completeTask'
  // The transcript (call-transcript.ts): the service's messages (`transcribe`, the bridge's own work), the
  // attach, and after a lost answer the look at the call's statistics.
  | 'transcribe'
  | 'attachTranscription'
  | 'findTranscript';
/**
 * `fetchRecord` (the bridge downloads a recording into its store) and `transcribe` (the transcription
 * service is asked) are the bridge's own work, not commands.
 */
export type PortalStep = Exclude<DeliveryStep, 'wait-start' | 'fetchRecord' | 'transcribe'>;

/**
 * A recording the bridge uploads itself (docs/API.md): downloaded from an allowed host (`fetch`) or pushed by
 * the PBX (`push`). Once its content is in the store (`recordings`), `bytes` and `filename` are set and
 * `uploadRecord` sends it: as FILE_CONTENT (`upload: 'content'`) or through the portal's uploadUrl (`'url'`).
 */
export interface RecordingUpload {
  source: 'fetch' | 'push';
  bytes?: number;
  filename?: string;
  upload?: 'content' | 'url';
  /** FILE_CONTENT's size as it goes in a batch command (base64, percent-encoded), counted by the planner. */
  wireBytes?: number;
  /** When the content now held was stored (ms epoch): tells an upload's answer from a newer push's. */
  storedAt?: number;
  /** A download that finds the file not there yet is retried until then (ms epoch). */
  fetchUntil?: number;
  /** Downloads tried, for the backoff. */
  fetchAttempts?: number;
}

/** One PBX event after validation and normalisation (phone in E.164). */
export interface CallEvent {
  event: CallEventName;
  callId: string;
  at: string;
  direction?: Direction;
  phoneNumber?: string;
  extension?: string;
  /** On call.started: every internal number ringing at once (ring group, queue). */
  extensions?: string[];
  userId?: number;
  startedAt?: string;
  durationSec?: number;
  status?: EndStatus;
  failedReason?: string;
  recordingUrl?: string;
  /**
   * The portal's CALL_ID when the PBX knows it (a click-to-call it dialled, the API contract (docs/API.md)): the call is
   * never registered, that CALL_ID is finished.
   */
  crmCallId?: string;
  /** Set by an adapter that inferred `direction` (the PBX sent none): which rule decided. */
  directionInferred?: string;
  /** The company's number the call came in on or went out from (docs/API.md "Lines"), normalised (`normaliseLine`). */
  line?: string;
}

/** What a line's rule (LINES) asks of its call's register and default employee, fixed with the call's line. */
export type LineTerms = Pick<LineRule, 'crmCreate' | 'crmSource' | 'defaultUserId'>;

/**
 * The task a missed inbound call gives (docs/API.md). What the task says is fixed before its first add, so
 * every repeat and every lookup names the same task.
 */
export interface MissedTask {
  /** End of the call + MISSED_CALL_TASK_DEADLINE_MIN, ISO 8601 with the PBX's offset. */
  deadline: string;
  /** The portal's task id, once an add or a lookup told it. */
  id?: number;
  /** Whom the task goes to, fixed before the first add. */
  responsibleId?: number;
  /** The client's name, when the CRM knew the number (fixed with the responsible). */
  clientName?: string;
  /** When the first add was sent (ms epoch): a lookup looks for tasks created since shortly before. */
  firstTriedAt?: number;
  /** When the latest add was sent (ms epoch): until it has settled, a lookup that finds nothing looks again. */
  lastAddAt?: number;
  /** Adds sent, counted before sending (kept apart from `delivery.stepsSent`, which an operator's re-queue resets). */
  addsSent?: number;
  /** Adds known to have made no task (answered with an error, or a lookup after them found none). */
  addsCleared?: number;
  /** The number's next call was answered at this time (ms epoch), before the deadline: complete the task. */
  calledBackAt?: number;
  /** The call that answered it. */
  calledBackBy?: string;
  completed?: boolean;
  /** Given up: why (the portal refused the add or the completion for good). */
  failed?: string;
}

/** Who says a transcript's message (SPEC §12): the employee `User`, the outside party `Client`. */
export type TranscriptSide = 'User' | 'Client';

/** One message of `telephony.call.attachTranscription`: whole seconds from the start of the recording. */
export interface TranscriptMessage {
  SIDE: TranscriptSide;
  START_TIME: number;
  STOP_TIME: number;
  MESSAGE: string;
}

/**
 * The call's transcript (SPEC §12, call-transcript.ts): `pending` until the portal has it (`attached`, its
 * TRANSCRIPT_ID kept), the recording had no speech (`none`) or it is given up (`failed`, the reason in
 * `lastError`). The service's messages are stored before the portal is called, so a crash never asks twice.
 */
export interface CallTranscript {
  state: 'pending' | 'attached' | 'none' | 'failed';
  messages?: TranscriptMessage[];
  /** The portal's TRANSCRIPT_ID, from the attach's answer or the call's statistics. */
  id?: number;
  /** When the service was first asked (ms epoch): retried until TRANSCRIBE_WAIT_SEC after it. */
  firstTriedAt?: number;
  /** Service attempts so far, for the backoff. */
  tries?: number;
  /** Attaches sent, counted before sending (kept apart from `delivery.stepsSent`, which a re-queue resets). */
  sends?: number;
  /** Attaches known to have made no transcript (answered with an error, or the statistics show none). */
  sendsCleared?: number;
}

/** The employee a call is registered to on the portal, exactly as sent (a retried register must match). */
export interface PortalUser {
  USER_ID?: number;
  USER_PHONE_INNER?: string;
}

export interface CrmBinding {
  CRM_ENTITY_TYPE: string;
  CRM_ENTITY_ID: number;
}

/** Card keys and the portal users they stand for, as one show or hide command names them. */
export interface CardTarget {
  keys: string[];
  userIds: number[];
}

/** How a call came to carry a portal CALL_ID it did not register (click-match.ts; shown in its status). */
export interface ClickToCall {
  portalCallId: string;
  matchedBy: 'crmCallId' | 'click';
  /** Another bridge call took this CALL_ID first (it finishes it): this one never finishes it again. */
  finishedBy?: string;
}

export interface CallEnd {
  at: string;
  durationSec: number;
  status: EndStatus;
  failedReason?: string;
  recordingUrl?: string;
}

/**
 * The call as the bridge keeps it: its identity, then one part per concern, each patched by its own
 * function (`withParty`, `withCard`, `withPortal`, `withRecording`, `withTask`, `withDelivery`). Stored as
 * JSON in this shape; a row stored before the parts existed (flat) is upgraded when read (`callFromStored`
 * in `src/store/stored-call.ts`).
 */
export interface CallRecord {
  portalId: string;
  callId: string;
  createdAt: number;
  updatedAt: number;
  /** What the PBX said: who called whom, who rang and answered, the end (call-lifecycle.ts applies events). */
  party: CallParty;
  /** The call card while the phone rings: whom it was popped for and shown to (call-card.ts). */
  card: CallCard;
  /** The call on the portal: its CALL_ID, the employee it is registered to, the CRM record it bound to. */
  portal: CallPortal;
  /** The call's recording: attached, refused, or the file the bridge uploads itself (recording steps). */
  recording: CallRecording;
  /** MISSED_CALL_TASK: the task this missed inbound call gives its client's employee (missed-call-task.ts). */
  task?: MissedTask;
  /** TRANSCRIBE_URL: the transcript of an answered call whose recording the bridge holds (SPEC §12). */
  transcript?: CallTranscript;
  /** How far delivery to the portal has come: state, the next step, retries (step-planner.ts). */
  delivery: CallDelivery;
}

/** What the PBX said about the call. */
export interface CallParty {
  direction?: Direction;
  /** The PBX named no direction: which rule inferred it (shown in the call's status). */
  directionInferred?: string;
  phoneNumber?: string;
  extension?: string;
  userId?: number;
  /** When the call began, with the UTC offset the PBX gave. */
  startedAt?: string;
  /** The call's line (docs/API.md "Lines"): the PBX's, else B24_LINE_NUMBER; fixed with the start details. */
  line?: string;
  /** Pop the call card: true only for calls the bridge hears about while they ring. */
  heardRinging: boolean;
  heardStart: boolean;
  /** Everyone the call rang at once (card keys, `call-card.ts`), when the PBX named a ring group. */
  ringing?: string[];
  /**
   * Phones that began ringing after the last answer (a blind transfer's target, card keys): shown the card
   * beside the answerer until the next answer or the end.
   */
  ringingSinceAnswer?: string[];
  answeredAt?: string;
  /** Who picked up last (card key): the card moves to them and `finish` goes out with them. */
  answeredBy?: string;
  ended?: CallEnd;
  /** call.ended without start details waits until then for its call.started (ms epoch). */
  holdUntil?: number;
  /** Failed only because no call.started came within the hold: a late start brings it back. */
  holdExpired?: boolean;
}

/** The call card (`call-card.ts`): people are named by card keys (an internal number, or `user:<id>`). */
export interface CallCard {
  /** Who the register popped the card for (card key), fixed when it is sent with SHOW=1. */
  registerKey?: string;
  /** Card keys the portal confirmed showing the card to. */
  shown?: string[];
  /** Card keys a show (or register) was sent for without an answer yet: hidden when the card moves on. */
  maybe?: string[];
  /** The show/hide in flight: which card keys, as which portal user ids (fixed before sending). */
  sending?: { show?: CardTarget; hide?: CardTarget };
  /**
   * The portal user each internal number among the card keys stands for, noted from the employee directory
   * by the delivery batch and kept for the call: `103` and `user:3` are then one person (`call-card.ts`).
   */
  users?: Record<string, number>;
  /** A finish refused for good left the card open (it popped when the call rang): `hide` closes it. */
  toHide?: boolean;
  /** Whom `hide` closes the card for: the register's employee, fixed before the hide is sent. */
  userIds?: number[];
}

/** The call on the portal. */
export interface CallPortal {
  /** The employee the call is registered to. */
  user?: PortalUser;
  /** Whom `finish` names: the answerer (else the register's employee), fixed before the finish is sent. */
  finishUser?: PortalUser;
  /** With B24_BIND_CRM_ENTITY: the client the register binds the call to (null: none found), fixed once. */
  binding?: CrmBinding | null;
  routedToDefaultUser: boolean;
  /** The portal's CALL_ID, once registered (or taken from a click). */
  callId?: string;
  /** Click-to-call (click-match.ts): the CALL_ID is the portal's own, taken from a crmCallId or a click. */
  clickToCall?: ClickToCall;
  entityType?: string;
  entityId?: number;
  createdLead?: number;
  /** Finished on the portal. */
  finished: boolean;
  /** The call's line's rule (LINES): CRM_CREATE, CRM_SOURCE, the default employee; unset: the defaults. */
  lineTerms?: LineTerms;
}

/** The call's recording. */
export interface CallRecording {
  attached: boolean;
  failed: boolean;
  /** The recording the bridge downloads or was pushed, and uploads itself; unset: RECORD_URL (or none). */
  file?: RecordingUpload;
}

/** How far delivery to the portal has come. */
export interface CallDelivery {
  state: CallState;
  nextStep?: DeliveryStep;
  /** When delivery may next act on this call (ms epoch); unset when nothing is due. */
  dueAt?: number;
  /** Earliest next attempt after a retryable failure (ms epoch). */
  retryAt?: number;
  /** Portal commands sent for this call, in all. */
  attempts: number;
  /** Commands sent per step, counted before sending: tells a repeat from a first try after a lost answer. */
  stepsSent: Partial<Record<PortalStep, number>>;
  /**
   * Times the portal refused a step of this call itself (the request refused with only that command in it,
   * or the command failing on its own); the step is given up at DELIVERY_MAX_ATTEMPTS. Outages do not count.
   */
  refused?: Partial<Record<PortalStep, number>>;
  /** Suspected of getting a whole request refused: its next request holds at most this many commands. */
  batchLimit?: number;
  consecutiveFailures: number;
  failed: boolean;
  lastError?: string;
  /** The call's line says `"report": false` (LINES): nothing of it goes to the portal (state `ignored`). */
  ignored?: boolean;
}

/** A change to some parts of a call: each part's fields merged into that part, the rest as given. */
export type CallPatch = {
  [K in keyof CallRecord]?: NonNullable<CallRecord[K]> extends object
    ? Partial<CallRecord[K]>
    : CallRecord[K];
};

/** The call with `patch` merged into its parts. */
export function patchCall(call: CallRecord, patch: CallPatch): CallRecord {
  const next: Record<string, unknown> = { ...call };
  for (const [key, value] of Object.entries(patch)) {
    const part = next[key];
    next[key] =
      typeof part === 'object' && typeof value === 'object' && value ? { ...part, ...value } : value;
  }
  return next as unknown as CallRecord;
}

export function withParty(call: CallRecord, patch: Partial<CallParty>): CallRecord {
  return { ...call, party: { ...call.party, ...patch } };
}

export function withCard(call: CallRecord, patch: Partial<CallCard>): CallRecord {
  return { ...call, card: { ...call.card, ...patch } };
}

export function withPortal(call: CallRecord, patch: Partial<CallPortal>): CallRecord {
  return { ...call, portal: { ...call.portal, ...patch } };
}

export function withRecording(call: CallRecord, patch: Partial<CallRecording>): CallRecord {
  return { ...call, recording: { ...call.recording, ...patch } };
}

/** The call's task with `patch` (the call must have one). */
export function withTask(call: CallRecord, patch: Partial<MissedTask>): CallRecord {
  return { ...call, task: { ...call.task!, ...patch } };
}

/** The call's transcript with `patch` (the call must have one). */
export function withTranscript(call: CallRecord, patch: Partial<CallTranscript>): CallRecord {
  return { ...call, transcript: { ...call.transcript!, ...patch } };
}

export function withDelivery(call: CallRecord, patch: Partial<CallDelivery>): CallRecord {
  return { ...call, delivery: { ...call.delivery, ...patch } };
}

export function hasStartDetails(call: CallRecord): boolean {
  return Boolean(call.party.direction && call.party.phoneNumber && call.party.startedAt);
}

/** A card key naming a portal user by id (`user:<id>`), where the PBX named no internal number. */
export const USER_KEY_PREFIX = 'user:';

/** The card key of an employee named by internal number or portal user id (`call-card.ts`). */
export function cardKey(extension?: string, userId?: number): string | undefined {
  if (extension) return extension;
  return userId === undefined ? undefined : `${USER_KEY_PREFIX}${userId}`;
}

/**
 * Whom a `call.started` names as ringing (card keys, once each): `extension` and every one of `extensions`,
 * or, naming no ring group, its one employee by internal number or user id.
 */
export function ringersOf(event: CallEvent): string[] {
  const keys = event.extensions
    ? [event.extension, ...event.extensions]
    : [cardKey(event.extension, event.userId)];
  return [...new Set(keys.filter((key): key is string => Boolean(key)))];
}

/** Whom the call rings (card keys): the ring group its starts named, else its one employee. */
export function ringingOf(call: CallRecord): string[] {
  if (call.party.ringing) return call.party.ringing;
  const key = cardKey(call.party.extension, call.party.userId);
  return key === undefined ? [] : [key];
}

/**
 * The phones a later `call.started` of a call already started names that do not ring yet, sorted; empty for
 * the call's first start and for a start naming nobody new. Before the answer those are the ring group's
 * new members (a queue's next member, a hunt group's next phone, follow-me); once someone answered, phones
 * other than the answerer and those ringing since (a blind transfer's target dialled by the PBX).
 */
export function lateRingers(event: CallEvent, call: CallRecord | undefined): string[] {
  if (event.event !== 'call.started' || !call?.party.heardStart) return [];
  const known = new Set(ringsSinceAnswer(call) ? ringingAfterAnswer(call) : ringingOf(call));
  return ringersOf(event)
    .filter((key) => !known.has(key))
    .sort();
}

/** Whether a later start now rings beside an answer (someone answered, the call has not ended). */
export function ringsSinceAnswer(call: CallRecord): boolean {
  return call.party.answeredBy !== undefined && !call.party.ended;
}

/** Who has the call since its last answer: the answerer and the phones that began ringing since. */
function ringingAfterAnswer(call: CallRecord): string[] {
  return [call.party.answeredBy!, ...(call.party.ringingSinceAnswer ?? [])];
}

/**
 * What a later `call.ended` adds to the end already stored (FreeSWITCH posts its CDR before the event
 * socket's hang-up, and either may lack what the other has): a recording where none was, or an answer where
 * the first said not answered while the finish has not gone to the portal (a sent finish cannot be undone).
 * Empty for a first end and for one that brings nothing new.
 */
export function endAdditions(event: CallEvent, call: CallRecord | undefined): EndAddition[] {
  const ended = call?.party.ended;
  if (event.event !== 'call.ended' || !call || !ended) return [];
  const additions: EndAddition[] = [];
  const finishSent = call.portal.finished || (call.delivery.stepsSent.finish ?? 0) > 0;
  if (event.status === 'answered' && ended.status !== 'answered' && !finishSent) additions.push('answered');
  if (event.recordingUrl && !ended.recordingUrl && !call.recording.file) additions.push('recording');
  return additions;
}

export type EndAddition = 'answered' | 'recording';

/** Past this length a late start's key names its new phones by their hash (the key is a primary key column). */
const MAX_RINGERS_KEY = 200;

/**
 * The event's idempotency key within its call (docs/API.md): its name, and for `call.answered` also who
 * answered, so a later answer by someone else (a transfer) is a new event and a repeat of the same is not.
 * A `call.started` of a call already started that names phones not ringing yet is keyed by those phones
 * (`call.started/+102,103`; once answered, also by the answerer: `call.started/101/+103`): they are shown
 * the card while they ring; a start naming nobody new keys as the first start did, so a repeat is a
 * duplicate. A `call.ended` that adds to the stored end is keyed by what it adds (`call.ended/+recording`);
 * one adding nothing is a duplicate of the first. `call` is the call as stored before this event.
 */
export function idempotencyKey(event: CallEvent, call?: CallRecord): string {
  if (event.event === 'call.started') {
    const late = lateRingers(event, call).join(',');
    if (!late) return event.event;
    const named =
      late.length <= MAX_RINGERS_KEY ? late : `sha256:${createHash('sha256').update(late).digest('hex')}`;
    const since = call && ringsSinceAnswer(call) ? `/${call.party.answeredBy}` : '';
    return `${event.event}${since}/+${named}`;
  }
  if (event.event === 'call.ended') {
    const additions = endAdditions(event, call);
    return additions.length === 0 ? event.event : `${event.event}/+${additions.join(',')}`;
  }
  const who = cardKey(event.extension, event.userId);
  return who === undefined ? event.event : `${event.event}/${who}`;
}
