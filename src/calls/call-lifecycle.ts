import { DateTime } from 'luxon';
import {
  CallDelivery,
  CallEvent,
  CallPortal,
  CallRecord,
  endAdditions,
  hasStartDetails,
  lateRingers,
  PortalStep,
  PortalUser,
  ringingOf,
  ringsSinceAnswer,
  withCard,
  withDelivery,
  withParty,
  withPortal,
  withRecording,
} from './call';
import {
  cardClosedFor,
  cardKey,
  cardMoves,
  cardShownTo,
  finishKey,
  isLive,
  withKeys,
  withoutKeys,
} from './call-card';
import { isTaskStep, missedTaskStep, TASK_PRIORITY, withMissedTask } from './missed-call-task';
import { LineBook } from '../common/lines';
import { assignLine, missedTaskDeadlineOf } from './call-line';
import { isTranscriptStep, TRANSCRIPT_PRIORITY, transcriptStep } from './call-transcript';

/**
 * Pure rules of a call's life: how each PBX event changes the call, and what delivery does next.
 * The store runs these inside its transactions; nothing here does I/O.
 */

export interface LifecycleSettings {
  now: number;
  holdEndedWithoutStartMs: number;
  /** RECORDING_FETCH_HOSTS: a recordingUrl the bridge downloads itself, and for how long (docs/API.md). */
  recordingFetch?: { fetchable(url: string): boolean; waitMs: number };
  /** MISSED_CALL_TASK: from a missed call's end to its task's deadline; undefined when off. */
  missedCallTaskDeadlineMs?: number;
  /** MISSED_CALL_TASK_DEADLINE_MIN in ms, for a line whose rule turns tasks on (`missedCallTask: true`). */
  missedCallTaskWindowMs?: number;
  /** The portal's lines (LINES, B24_LINE_NUMBER; docs/API.md "Lines"): each call's line and its rule. */
  lines?: LineBook;
}

export function newCall(portalId: string, callId: string, now: number): CallRecord {
  return {
    portalId,
    callId,
    createdAt: now,
    updatedAt: now,
    party: { heardRinging: false, heardStart: false },
    card: {},
    portal: { routedToDefaultUser: false, finished: false },
    recording: { attached: false, failed: false },
    delivery: { state: 'queued', attempts: 0, stepsSent: {}, consecutiveFailures: 0, failed: false },
  };
}

export function applyEvent(call: CallRecord, event: CallEvent, settings: LifecycleSettings): CallRecord {
  // The rules below patch the parts of this copy in place.
  const next = {
    ...call,
    party: { ...call.party },
    recording: { ...call.recording },
    delivery: { ...call.delivery },
    updatedAt: settings.now,
  };
  if (event.event === 'call.started') applyStarted(next, event);
  else if (event.event === 'call.answered') applyAnswered(next, event);
  else applyEnded(next, event, settings);
  // The line (docs/API.md "Lines"): the first the PBX names, else B24_LINE_NUMBER once the start details are known; its
  // rule is fixed with it, so a retried register sends what the first one did. Never for a call whose
  // register went out already (a call stored before lines existed).
  const unsent = !next.portal.callId && (next.delivery.stepsSent.register ?? 0) === 0;
  if (next.party.line === undefined && unsent && (event.line !== undefined || hasStartDetails(next))) {
    assignLine(next, event.line ?? settings.lines?.defaultLine, settings);
  }
  return plan(withMissedTask(next, missedTaskDeadlineOf(next, settings)), settings.now);
}

function applyStarted(call: CallRecord, event: CallEvent): void {
  // A later start names phones that began ringing since. Before the answer (a queue's next member, a hunt
  // group, follow-me) they join the ring group: shown the card while the call rings (`call-card.ts`), hidden
  // on the answer like the first ones. After an answer (a blind transfer's target) they ring beside the
  // answerer: shown the card until the next answer or the end. After the end they are shown nothing.
  const late = lateRingers(event, call);
  if (late.length > 0) {
    if (ringsSinceAnswer(call)) call.party.ringingSinceAnswer = withKeys(call.party.ringingSinceAnswer, late);
    else call.party.ringing = withKeys(ringingOf(call), late);
    return;
  }
  call.party.heardStart = true;
  // A call already registered (or about to be) from a CDR keeps what it has: the start changes nothing.
  if (hasStartDetails(call)) return;
  call.party.direction = event.direction;
  call.party.phoneNumber = event.phoneNumber;
  call.party.startedAt = event.at;
  call.party.extension ??= event.extension ?? event.extensions?.[0];
  call.party.userId ??= event.userId;
  const ringing = [...new Set([event.extension, ...(event.extensions ?? [])].filter((key) => key))];
  if (ringing.length > 1) call.party.ringing = ringing as string[];
  // Still ringing when we hear of it: pop the card. A start arriving after the end pops nothing.
  call.party.heardRinging = !call.party.ended;
  call.party.holdUntil = undefined;
  // Parked only because this start came after the hold: the call goes on to the portal now.
  if (call.party.holdExpired) {
    call.delivery.failed = false;
    call.party.holdExpired = undefined;
    call.delivery.lastError = undefined;
  }
}

/**
 * Who picked up: the card moves to them (a later answer by someone else is a transfer), finish names them;
 * phones that rang since the previous answer are viewers no more.
 */
function applyAnswered(call: CallRecord, event: CallEvent): void {
  call.party.answeredAt = event.at;
  call.party.answeredBy = cardKey(event.extension, event.userId) ?? call.party.answeredBy;
  call.party.ringingSinceAnswer = undefined;
}

function applyEnded(call: CallRecord, event: CallEvent, settings: LifecycleSettings): void {
  if (call.party.ended) mergeEnd(call, event);
  else {
    call.party.ended = {
      at: event.at,
      durationSec: event.durationSec ?? 0,
      status: event.status ?? 'answered',
      failedReason: event.failedReason,
      recordingUrl: event.recordingUrl,
    };
  }
  const fetch = settings.recordingFetch;
  const url = call.party.ended.recordingUrl;
  if (url && !call.recording.file && fetch?.fetchable(url)) {
    call.recording.file = { source: 'fetch', fetchUntil: settings.now + fetch.waitMs };
  }
  call.party.extension ??= event.extension;
  call.party.userId ??= event.userId;
  if (hasStartDetails(call)) return;
  if (event.direction && event.phoneNumber) {
    call.party.direction = event.direction;
    call.party.directionInferred = event.directionInferred;
    call.party.phoneNumber = event.phoneNumber;
    call.party.startedAt = event.startedAt ?? secondsBefore(event.at, event.durationSec ?? 0);
    call.party.heardRinging = false;
    call.party.holdUntil = undefined;
  } else {
    call.party.holdUntil = settings.now + settings.holdEndedWithoutStartMs;
  }
}

/**
 * A later call.ended that adds to the stored end (`endAdditions`): its answer replaces a missed end whose
 * finish has not gone out (with its talk time; the missed-call task it planned is dropped, nothing of it
 * was sent), its recording fills a missing one (attached as usual once the call is finished).
 */
function mergeEnd(call: CallRecord, event: CallEvent): void {
  const additions = endAdditions(event, call);
  const ended = { ...call.party.ended! };
  if (additions.includes('answered')) {
    Object.assign(ended, { at: event.at, durationSec: event.durationSec ?? 0, status: 'answered' });
    ended.failedReason = undefined;
    call.task = undefined;
  }
  if (additions.includes('recording')) ended.recordingUrl = event.recordingUrl;
  call.party.ended = ended;
}

/** `at` minus some seconds, keeping the UTC offset the PBX wrote. */
export function secondsBefore(at: string, seconds: number): string {
  const moment = DateTime.fromISO(at, { setZone: true }).minus({ seconds });
  return moment.toISO({ suppressMilliseconds: true }) ?? at;
}

/** Derives state, next step and due time from what the call has and lacks. */
export function plan(call: CallRecord, now: number): CallRecord {
  const next = { ...call, delivery: { ...call.delivery } };
  next.delivery.nextStep = nextStep(next);
  next.delivery.state = next.delivery.failed
    ? 'failed'
    : isIgnored(next)
      ? 'ignored'
      : next.portal.finished
        ? 'finished'
        : next.portal.callId
          ? 'registered'
          : 'queued';
  if (!next.delivery.nextStep) next.delivery.dueAt = undefined;
  else if (next.delivery.nextStep === 'wait-start') next.delivery.dueAt = next.party.holdUntil;
  else next.delivery.dueAt = Math.max(now, next.delivery.retryAt ?? 0);
  return next;
}

/**
 * A call of a line with `"report": false`: never sent. A click-to-call's CALL_ID is the portal's own (its
 * click made it there), so that call is still finished as any other.
 */
export function isIgnored(call: CallRecord): boolean {
  return call.delivery.ignored === true && !call.portal.clickToCall;
}

function nextStep(call: CallRecord): CallDelivery['nextStep'] {
  if (isIgnored(call)) return undefined;
  if (call.delivery.failed) {
    return cardMoves(call).hide.length > 0 || legacyCardToHide(call) ? 'hide' : undefined;
  }
  // A click-to-call's CALL_ID is the portal's own (click-match.ts): its finish needs no start details.
  if (!hasStartDetails(call) && !call.portal.clickToCall) return call.party.ended ? 'wait-start' : undefined;
  if (!call.portal.callId) return 'register';
  if (call.party.ended && !call.portal.finished) return 'finish';
  const moves = cardMoves(call);
  if (moves.show.length > 0) return 'show';
  if (moves.hide.length > 0) return 'hide';
  // The transcript is the last step of the call's history (SPEC §12).
  return recordingStep(call) ?? missedTaskStep(call) ?? transcriptStep(call);
}

/**
 * The recording's step once the call is finished on the portal: its RECORD_URL (`attachRecord`), the
 * download into the store (`fetchRecord`), or the upload of the stored content (`uploadRecord`).
 */
export function recordingStep(call: CallRecord): CallDelivery['nextStep'] {
  if (!call.portal.finished || call.recording.attached || call.recording.failed) return undefined;
  const recording = call.recording.file;
  if (recording?.bytes !== undefined) return 'uploadRecord';
  if (recording) return recording.source === 'fetch' ? 'fetchRecord' : undefined;
  return call.party.ended?.recordingUrl ? 'attachRecord' : undefined;
}

/** A call stored before card keys existed, parked after its card popped: its register's employee is hidden. */
function legacyCardToHide(call: CallRecord): boolean {
  return Boolean(call.card.toHide && call.portal.callId && call.card.registerKey === undefined);
}

/**
 * Priority class of the call's next step: 0 for a live call's register and card moves (they go ahead of
 * everything else, the API contract (docs/API.md) "Ringing first"), 2 for missed-call tasks, 3 for
 * transcripts, 1 for the rest. Stored beside
 * `due_at` so the store lists class 0 first.
 */
export function deliveryPriority(call: CallRecord): number {
  const step = call.delivery.nextStep;
  // Missed-call tasks wait behind history (class 2): they never delay a card, a register or a finish.
  if (isTaskStep(step as PortalStep | undefined)) return TASK_PRIORITY;
  // Transcripts wait behind everything (class 3): a ringing call, a finish, a recording, a task.
  if (isTranscriptStep(step)) return TRANSCRIPT_PRIORITY;
  return isLive(call) && (step === 'register' || step === 'show' || step === 'hide') ? 0 : 1;
}

/**
 * Which employee the call goes to: the PBX's extension, else its user id, else the default employee.
 * `employeeFor` consults the employee directory: a user id, `null` when the loaded directory has no active
 * employee with that extension, or undefined when there is no directory yet (the portal then resolves
 * USER_PHONE_INNER itself, and an unknown one is re-routed on its answer).
 */
export function choosePortalUser(
  call: CallRecord,
  defaultUserId: number | undefined,
  employeeFor: (extension: string) => number | null | undefined = () => undefined,
): { user: PortalUser; routedToDefaultUser: boolean } | undefined {
  if (call.party.extension) {
    const userId = employeeFor(call.party.extension);
    if (typeof userId === 'number') return { user: { USER_ID: userId }, routedToDefaultUser: false };
    if (userId === null && defaultUserId !== undefined) {
      return { user: { USER_ID: defaultUserId }, routedToDefaultUser: true };
    }
    return { user: { USER_PHONE_INNER: call.party.extension }, routedToDefaultUser: false };
  }
  if (call.party.userId !== undefined) {
    return { user: { USER_ID: call.party.userId }, routedToDefaultUser: false };
  }
  if (defaultUserId !== undefined) return { user: { USER_ID: defaultUserId }, routedToDefaultUser: true };
  return undefined;
}

/** What a register's answer tells of the call on the portal. */
export type RegisteredOnPortal = Required<Pick<CallPortal, 'callId'>> &
  Pick<CallPortal, 'entityType' | 'entityId' | 'createdLead'>;

/** Registered; a register sent with SHOW=1 showed its employee the card. */
export function markRegistered(call: CallRecord, result: RegisteredOnPortal, now: number): CallRecord {
  const registerKey = call.card.registerKey;
  const popped = registerKey && call.card.maybe?.includes(registerKey);
  const card = popped ? cardShownTo(call, [registerKey]) : call.card;
  return plan(withPortal({ ...succeeded(call, now), card }, result), now);
}

/** Finished; the finish closed the card of the employee it named. */
export function markFinished(call: CallRecord, now: number): CallRecord {
  const key = finishKey(call);
  const card = key === undefined ? call.card : cardClosedFor(call, [key]);
  return plan(withPortal({ ...succeeded(call, now), card }, { finished: true }), now);
}

/** The show in flight went through, or is given up (`note` says why; it is not tried again). */
export function markCardShown(call: CallRecord, now: number, note?: string): CallRecord {
  const keys = call.card.sending?.show?.keys ?? [];
  const base = note ? { ...withDelivery(call, { lastError: note }), updatedAt: now } : succeeded(call, now);
  const card = { ...cardShownTo(call, keys), sending: { ...call.card.sending, show: undefined } };
  return plan({ ...base, card }, now);
}

/** Card keys whose portal user is unknown: nothing can be shown or hidden for them; they leave the card. */
export function dropCardKeys(call: CallRecord, keys: string[], now: number): CallRecord {
  if (keys.length === 0) return call;
  const { ringing, ringingSinceAnswer, answeredBy } = call.party;
  const note = `card: no portal user known for internal number ${keys.join(', ')}`;
  const party = {
    ...call.party,
    ringing: ringing && withoutKeys(ringing, keys),
    ringingSinceAnswer: ringingSinceAnswer && withoutKeys(ringingSinceAnswer, keys),
    answeredBy: answeredBy && keys.includes(answeredBy) ? undefined : answeredBy,
  };
  const card = cardClosedFor(call, keys);
  return plan({ ...withDelivery(call, { lastError: note }), party, card, updatedAt: now }, now);
}

export function markRecordAttached(call: CallRecord, now: number): CallRecord {
  return plan(withRecording(succeeded(call, now), { attached: true }), now);
}

/** A recording the portal refuses leaves the call finished, with the reason kept. */
export function markRecordFailed(call: CallRecord, reason: string, now: number): CallRecord {
  return plan(
    withDelivery(withRecording(succeeded(call, now), { failed: true }), { lastError: reason }),
    now,
  );
}

/** What the store holds of a recording once its content is there: size, file name, how it goes up. */
export interface StoredRecording {
  bytes: number;
  filename: string;
  upload: 'content' | 'url';
  wireBytes: number;
}

/**
 * The recording's content is in the store (downloaded, or pushed by the PBX: a pushed file wins over a
 * recordingUrl and replaces a recording already attached); `uploadRecord` is due once the call is finished.
 */
export function markRecordingStored(
  call: CallRecord,
  source: 'fetch' | 'push',
  stored: StoredRecording,
  now: number,
): CallRecord {
  const file = {
    ...(source === call.recording.file?.source ? call.recording.file : {}),
    source,
    ...stored,
    storedAt: now,
  };
  // A parked call keeps why it was parked: a new file is no answer to that.
  const lastError = call.delivery.failed ? call.delivery.lastError : undefined;
  const withFile = withRecording(succeeded(call, now), { file, attached: false, failed: false });
  return plan(withDelivery(withFile, { lastError }), now);
}

/** A download is under way until `until` (a crash mid-download tries again then). */
export function markRecordingFetching(call: CallRecord, until: number, now: number): CallRecord {
  return plan({ ...withDelivery(call, { retryAt: until }), updatedAt: now }, now);
}

/**
 * The recording is not there yet (404, 409, 425, 503, refused): tried again with backoff until
 * RECORDING_WAIT_SEC after the end, then the call stays finished with the reason.
 */
export function markRecordingNotReady(
  call: CallRecord,
  reason: string,
  now: number,
  maxBackoffMs: number,
): CallRecord {
  const file = call.recording.file!;
  const attempts = (file.fetchAttempts ?? 0) + 1;
  const until = file.fetchUntil ?? now;
  if (now >= until) {
    return markRecordFailed(call, `recording: ${reason}; not there within RECORDING_WAIT_SEC`, now);
  }
  const delay = Math.min(maxBackoffMs, 1000 * 2 ** Math.min(attempts - 1, 20));
  const retrying = withDelivery(withRecording(call, { file: { ...file, fetchAttempts: attempts } }), {
    retryAt: Math.min(now + delay, until),
    lastError: `recording: ${reason} (retrying)`,
  });
  return plan({ ...retrying, updatedAt: now }, now);
}

export function routeToDefaultUser(
  call: CallRecord,
  defaultUserId: number,
  reason: string,
  now: number,
): CallRecord {
  const routed = withPortal(call, { user: { USER_ID: defaultUserId }, routedToDefaultUser: true });
  return plan({ ...withDelivery(routed, { lastError: reason }), updatedAt: now }, now);
}

export function markRetry(call: CallRecord, reason: string, retryAt: number, now: number): CallRecord {
  const delivery = {
    ...call.delivery,
    consecutiveFailures: call.delivery.consecutiveFailures + 1,
    lastError: reason,
    retryAt,
  };
  return plan({ ...call, delivery, updatedAt: now }, now);
}

export function markFailed(call: CallRecord, reason: string, now: number): CallRecord {
  const delivery = { ...call.delivery, failed: true, lastError: reason, retryAt: undefined };
  return plan({ ...call, delivery, updatedAt: now }, now);
}

/** No call.started came within the hold: parked, but a start arriving later still brings the call back. */
export function markHoldExpired(call: CallRecord, reason: string, now: number): CallRecord {
  return markFailed(withParty(call, { holdExpired: true }), reason, now);
}

/**
 * A finish refused for good: the call is parked, and a card that popped when it rang would stay open on the
 * portal (only finish closes it), so a `hide` follows.
 */
export function markFinishFailed(call: CallRecord, reason: string, now: number): CallRecord {
  const parked = withCard(call, { toHide: call.party.heardRinging });
  return markFailed(withDelivery(parked, { consecutiveFailures: 0, batchLimit: undefined }), reason, now);
}

/**
 * The hide in flight went through, or cannot (`note` says why): those keys leave the card. A parked call
 * keeps the reason it was parked for.
 */
export function markCardHidden(call: CallRecord, now: number, note?: string): CallRecord {
  const had = call.delivery.lastError;
  const lastError = note ? (had ? `${had}; ${note}` : note) : had;
  const keys = call.card.sending?.hide?.keys ?? [];
  const card = {
    ...cardClosedFor(call, keys),
    sending: { ...call.card.sending, hide: undefined },
    toHide: undefined,
  };
  const delivery = {
    ...call.delivery,
    consecutiveFailures: 0,
    retryAt: undefined,
    batchLimit: undefined,
    lastError,
  };
  return plan({ ...call, card, delivery, updatedAt: now }, now);
}

/**
 * An operator's re-queue: the call starts its remaining steps afresh. Steps count from zero again, so a
 * re-sent finish answered "Call is not found" is not taken for a repeat of one that went through.
 */
export function requeue(call: CallRecord, now: number, holdEndedWithoutStartMs: number): CallRecord {
  const holdUntil = hasStartDetails(call) ? undefined : now + holdEndedWithoutStartMs;
  const party = { ...call.party, holdExpired: undefined, holdUntil };
  const card = { ...call.card, toHide: undefined };
  const delivery = {
    ...call.delivery,
    failed: false,
    consecutiveFailures: 0,
    retryAt: undefined,
    stepsSent: {},
    refused: undefined,
    batchLimit: undefined,
  };
  return plan({ ...call, party, card, delivery, updatedAt: now }, now);
}

export function countSent(call: CallRecord, steps: PortalStep[]): CallRecord {
  const stepsSent = { ...call.delivery.stepsSent };
  for (const step of steps) stepsSent[step] = (stepsSent[step] ?? 0) + 1;
  return withDelivery(call, { attempts: call.delivery.attempts + steps.length, stepsSent });
}

/** A step went through: the retry state goes, and with it the last error. */
function succeeded(call: CallRecord, now: number): CallRecord {
  const delivery = {
    ...call.delivery,
    consecutiveFailures: 0,
    retryAt: undefined,
    batchLimit: undefined,
    lastError: undefined,
  };
  return { ...call, delivery, updatedAt: now };
}
