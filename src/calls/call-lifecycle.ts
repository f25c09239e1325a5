import { DateTime } from 'luxon';
import {
  CallEvent,
  CallRecord,
  endAdditions,
  hasStartDetails,
  lateRingers,
  PortalStep,
  PortalUser,
  ringingOf,
  ringsSinceAnswer,
} from './call';
import { cardKey, cardMoves, finishKey, isLive, withKeys, withoutKeys, withoutPeople } from './call-card';
import { isTaskStep, missedTaskStep, TASK_PRIORITY, withMissedTask } from './missed-call-task';

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
}

export function newCall(portalId: string, callId: string, now: number): CallRecord {
  return {
    portalId,
    callId,
    show: false,
    heardStart: false,
    routedToDefaultUser: false,
    finishedOnPortal: false,
    recordAttached: false,
    recordFailed: false,
    state: 'queued',
    attempts: 0,
    stepsSent: {},
    consecutiveFailures: 0,
    failed: false,
    createdAt: now,
    updatedAt: now,
  };
}

export function applyEvent(call: CallRecord, event: CallEvent, settings: LifecycleSettings): CallRecord {
  const next = { ...call, updatedAt: settings.now };
  if (event.event === 'call.started') applyStarted(next, event);
  else if (event.event === 'call.answered') applyAnswered(next, event);
  else applyEnded(next, event, settings);
  return plan(withMissedTask(next, settings.missedCallTaskDeadlineMs), settings.now);
}

function applyStarted(call: CallRecord, event: CallEvent): void {
  // A later start names phones that began ringing since. Before the answer (a queue's next member, a hunt
  // group, follow-me) they join the ring group: shown the card while the call rings (`call-card.ts`), hidden
  // on the answer like the first ones. After an answer (a blind transfer's target) they ring beside the
  // answerer: shown the card until the next answer or the end. After the end they are shown nothing.
  const late = lateRingers(event, call);
  if (late.length > 0) {
    if (ringsSinceAnswer(call)) call.ringingSinceAnswer = withKeys(call.ringingSinceAnswer, late);
    else call.ringing = withKeys(ringingOf(call), late);
    return;
  }
  call.heardStart = true;
  // A call already registered (or about to be) from a CDR keeps what it has: the start changes nothing.
  if (hasStartDetails(call)) return;
  call.direction = event.direction;
  call.phoneNumber = event.phoneNumber;
  call.startedAt = event.at;
  call.extension ??= event.extension ?? event.extensions?.[0];
  call.userId ??= event.userId;
  const ringing = [...new Set([event.extension, ...(event.extensions ?? [])].filter((key) => key))];
  if (ringing.length > 1) call.ringing = ringing as string[];
  // Still ringing when we hear of it: pop the card. A start arriving after the end pops nothing.
  call.show = !call.ended;
  call.holdUntil = undefined;
  // Parked only because this start came after the hold: the call goes on to the portal now.
  if (call.holdExpired) {
    call.failed = false;
    call.holdExpired = undefined;
    call.lastError = undefined;
  }
}

/**
 * Who picked up: the card moves to them (a later answer by someone else is a transfer), finish names them;
 * phones that rang since the previous answer are viewers no more.
 */
function applyAnswered(call: CallRecord, event: CallEvent): void {
  call.answeredAt = event.at;
  call.answeredBy = cardKey(event.extension, event.userId) ?? call.answeredBy;
  call.ringingSinceAnswer = undefined;
}

function applyEnded(call: CallRecord, event: CallEvent, settings: LifecycleSettings): void {
  if (call.ended) mergeEnd(call, event);
  else {
    call.ended = {
      at: event.at,
      durationSec: event.durationSec ?? 0,
      status: event.status ?? 'answered',
      failedReason: event.failedReason,
      recordingUrl: event.recordingUrl,
    };
  }
  const fetch = settings.recordingFetch;
  const url = call.ended.recordingUrl;
  if (url && !call.recording && fetch?.fetchable(url)) {
    call.recording = { source: 'fetch', fetchUntil: settings.now + fetch.waitMs };
  }
  call.extension ??= event.extension;
  call.userId ??= event.userId;
  if (hasStartDetails(call)) return;
  if (event.direction && event.phoneNumber) {
    call.direction = event.direction;
    call.directionInferred = event.directionInferred;
    call.phoneNumber = event.phoneNumber;
    call.startedAt = event.startedAt ?? secondsBefore(event.at, event.durationSec ?? 0);
    call.show = false;
    call.holdUntil = undefined;
  } else {
    call.holdUntil = settings.now + settings.holdEndedWithoutStartMs;
  }
}

/**
 * A later call.ended that adds to the stored end (`endAdditions`): its answer replaces a missed end whose
 * finish has not gone out (with its talk time; the missed-call task it planned is dropped, nothing of it
 * was sent), its recording fills a missing one (attached as usual once the call is finished).
 */
function mergeEnd(call: CallRecord, event: CallEvent): void {
  const additions = endAdditions(event, call);
  const ended = { ...call.ended! };
  if (additions.includes('answered')) {
    Object.assign(ended, { at: event.at, durationSec: event.durationSec ?? 0, status: 'answered' });
    ended.failedReason = undefined;
    call.missedTask = undefined;
  }
  if (additions.includes('recording')) ended.recordingUrl = event.recordingUrl;
  call.ended = ended;
}

/** `at` minus some seconds, keeping the UTC offset the PBX wrote. */
export function secondsBefore(at: string, seconds: number): string {
  const moment = DateTime.fromISO(at, { setZone: true }).minus({ seconds });
  return moment.toISO({ suppressMilliseconds: true }) ?? at;
}

/** Derives state, next step and due time from what the call has and lacks. */
export function plan(call: CallRecord, now: number): CallRecord {
  const next = { ...call };
  next.nextStep = nextStep(next);
  next.state = next.failed
    ? 'failed'
    : next.finishedOnPortal
      ? 'finished'
      : next.portalCallId
        ? 'registered'
        : 'queued';
  if (!next.nextStep) next.dueAt = undefined;
  else if (next.nextStep === 'wait-start') next.dueAt = next.holdUntil;
  else next.dueAt = Math.max(now, next.retryAt ?? 0);
  return next;
}

function nextStep(call: CallRecord): CallRecord['nextStep'] {
  if (call.failed) return cardMoves(call).hide.length > 0 || legacyCardToHide(call) ? 'hide' : undefined;
  // A click-to-call's CALL_ID is the portal's own (click-match.ts): its finish needs no start details.
  if (!hasStartDetails(call) && !call.clickToCall) return call.ended ? 'wait-start' : undefined;
  if (!call.portalCallId) return 'register';
  if (call.ended && !call.finishedOnPortal) return 'finish';
  const moves = cardMoves(call);
  if (moves.show.length > 0) return 'show';
  if (moves.hide.length > 0) return 'hide';
  return recordingStep(call) ?? missedTaskStep(call);
}

/**
 * The recording's step once the call is finished on the portal: its RECORD_URL (`attachRecord`), the
 * download into the store (`fetchRecord`), or the upload of the stored content (`uploadRecord`).
 */
export function recordingStep(call: CallRecord): CallRecord['nextStep'] {
  if (!call.finishedOnPortal || call.recordAttached || call.recordFailed) return undefined;
  const recording = call.recording;
  if (recording?.bytes !== undefined) return 'uploadRecord';
  if (recording) return recording.source === 'fetch' ? 'fetchRecord' : undefined;
  return call.ended?.recordingUrl ? 'attachRecord' : undefined;
}

/** A call stored before card keys existed, parked after its card popped: its register's employee is hidden. */
function legacyCardToHide(call: CallRecord): boolean {
  return Boolean(call.cardToHide && call.portalCallId && call.cardRegisterKey === undefined);
}

/**
 * Priority class of the call's next step: 0 for a live call's register and card moves (they go ahead of
 * everything else, the API contract (docs/API.md) "Ringing first"), 2 for missed-call tasks, 1 for the rest. Stored beside
 * `due_at` so the store lists class 0 first.
 */
export function deliveryPriority(call: CallRecord): number {
  const step = call.nextStep;
  // Missed-call tasks wait behind history (class 2): they never delay a card, a register or a finish.
  if (isTaskStep(step as PortalStep | undefined)) return TASK_PRIORITY;
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
  if (call.extension) {
    const userId = employeeFor(call.extension);
    if (typeof userId === 'number') return { user: { USER_ID: userId }, routedToDefaultUser: false };
    if (userId === null && defaultUserId !== undefined) {
      return { user: { USER_ID: defaultUserId }, routedToDefaultUser: true };
    }
    return { user: { USER_PHONE_INNER: call.extension }, routedToDefaultUser: false };
  }
  if (call.userId !== undefined) return { user: { USER_ID: call.userId }, routedToDefaultUser: false };
  if (defaultUserId !== undefined) return { user: { USER_ID: defaultUserId }, routedToDefaultUser: true };
  return undefined;
}

export interface RegisteredOnPortal {
  portalCallId: string;
  crmEntityType?: string;
  crmEntityId?: number;
  createdLead?: number;
}

/** Registered; a register sent with SHOW=1 showed its employee the card. */
export function markRegistered(call: CallRecord, result: RegisteredOnPortal, now: number): CallRecord {
  const popped = call.cardRegisterKey && call.cardMaybe?.includes(call.cardRegisterKey);
  const card = popped ? confirmShown(call, [call.cardRegisterKey!]) : {};
  return plan({ ...succeeded(call, now), ...card, ...result }, now);
}

/** Finished; the finish closed the card of the employee it named. */
export function markFinished(call: CallRecord, now: number): CallRecord {
  const key = finishKey(call);
  const closed = key === undefined ? {} : forgetCard(call, [key]);
  return plan({ ...succeeded(call, now), ...closed, finishedOnPortal: true }, now);
}

/** The show in flight went through, or is given up (`note` says why; it is not tried again). */
export function markCardShown(call: CallRecord, now: number, note?: string): CallRecord {
  const keys = call.cardSending?.show?.keys ?? [];
  const base = note ? { ...call, lastError: note, updatedAt: now } : succeeded(call, now);
  return plan(
    { ...base, ...confirmShown(call, keys), cardSending: { ...call.cardSending, show: undefined } },
    now,
  );
}

function confirmShown(call: CallRecord, keys: string[]): Pick<CallRecord, 'cardShown' | 'cardMaybe'> {
  return { cardShown: withKeys(call.cardShown, keys), cardMaybe: withoutKeys(call.cardMaybe, keys) };
}

/** The card is closed for the people `keys` name, whichever key they were shown it under. */
function forgetCard(call: CallRecord, keys: string[]): Pick<CallRecord, 'cardShown' | 'cardMaybe'> {
  return {
    cardShown: withoutPeople(call, call.cardShown, keys),
    cardMaybe: withoutPeople(call, call.cardMaybe, keys),
  };
}

/** Card keys whose portal user is unknown: nothing can be shown or hidden for them; they leave the card. */
export function dropCardKeys(call: CallRecord, keys: string[], now: number): CallRecord {
  if (keys.length === 0) return call;
  const ringing = call.ringing && withoutKeys(call.ringing, keys);
  const ringingSinceAnswer = call.ringingSinceAnswer && withoutKeys(call.ringingSinceAnswer, keys);
  const note = `card: no portal user known for internal number ${keys.join(', ')}`;
  return plan(
    {
      ...call,
      ...forgetCard(call, keys),
      ringing,
      ringingSinceAnswer,
      answeredBy: call.answeredBy && keys.includes(call.answeredBy) ? undefined : call.answeredBy,
      lastError: note,
      updatedAt: now,
    },
    now,
  );
}

export function markRecordAttached(call: CallRecord, now: number): CallRecord {
  return plan({ ...succeeded(call, now), recordAttached: true }, now);
}

/** A recording the portal refuses leaves the call finished, with the reason kept. */
export function markRecordFailed(call: CallRecord, reason: string, now: number): CallRecord {
  return plan({ ...succeeded(call, now), recordFailed: true, lastError: reason }, now);
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
  const recording = {
    ...(source === call.recording?.source ? call.recording : {}),
    source,
    ...stored,
    storedAt: now,
  };
  // A parked call keeps why it was parked: a new file is no answer to that.
  const lastError = call.failed ? call.lastError : undefined;
  return plan(
    { ...succeeded(call, now), lastError, recording, recordAttached: false, recordFailed: false },
    now,
  );
}

/** A download is under way until `until` (a crash mid-download tries again then). */
export function markRecordingFetching(call: CallRecord, until: number, now: number): CallRecord {
  return plan({ ...call, retryAt: until, updatedAt: now }, now);
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
  const recording = call.recording!;
  const attempts = (recording.fetchAttempts ?? 0) + 1;
  const until = recording.fetchUntil ?? now;
  if (now >= until) {
    return markRecordFailed(call, `recording: ${reason}; not there within RECORDING_WAIT_SEC`, now);
  }
  const delay = Math.min(maxBackoffMs, 1000 * 2 ** Math.min(attempts - 1, 20));
  return plan(
    {
      ...call,
      recording: { ...recording, fetchAttempts: attempts },
      retryAt: Math.min(now + delay, until),
      lastError: `recording: ${reason} (retrying)`,
      updatedAt: now,
    },
    now,
  );
}

export function routeToDefaultUser(
  call: CallRecord,
  defaultUserId: number,
  reason: string,
  now: number,
): CallRecord {
  return plan(
    {
      ...call,
      portalUser: { USER_ID: defaultUserId },
      routedToDefaultUser: true,
      lastError: reason,
      updatedAt: now,
    },
    now,
  );
}

export function markRetry(call: CallRecord, reason: string, retryAt: number, now: number): CallRecord {
  return plan(
    {
      ...call,
      consecutiveFailures: call.consecutiveFailures + 1,
      lastError: reason,
      retryAt,
      updatedAt: now,
    },
    now,
  );
}

export function markFailed(call: CallRecord, reason: string, now: number): CallRecord {
  return plan({ ...call, failed: true, lastError: reason, retryAt: undefined, updatedAt: now }, now);
}

/** No call.started came within the hold: parked, but a start arriving later still brings the call back. */
export function markHoldExpired(call: CallRecord, reason: string, now: number): CallRecord {
  return markFailed({ ...call, holdExpired: true }, reason, now);
}

/**
 * A finish refused for good: the call is parked, and a card that popped when it rang would stay open on the
 * portal (only finish closes it), so a `hide` follows.
 */
export function markFinishFailed(call: CallRecord, reason: string, now: number): CallRecord {
  return markFailed(
    { ...call, cardToHide: call.show, consecutiveFailures: 0, batchLimit: undefined },
    reason,
    now,
  );
}

/**
 * The hide in flight went through, or cannot (`note` says why): those keys leave the card. A parked call
 * keeps the reason it was parked for.
 */
export function markCardHidden(call: CallRecord, now: number, note?: string): CallRecord {
  const lastError = note ? (call.lastError ? `${call.lastError}; ${note}` : note) : call.lastError;
  const keys = call.cardSending?.hide?.keys ?? [];
  return plan(
    {
      ...call,
      ...forgetCard(call, keys),
      cardSending: { ...call.cardSending, hide: undefined },
      cardToHide: undefined,
      consecutiveFailures: 0,
      retryAt: undefined,
      batchLimit: undefined,
      lastError,
      updatedAt: now,
    },
    now,
  );
}

/**
 * An operator's re-queue: the call starts its remaining steps afresh. Steps count from zero again, so a
 * re-sent finish answered "Call is not found" is not taken for a repeat of one that went through.
 */
export function requeue(call: CallRecord, now: number, holdEndedWithoutStartMs: number): CallRecord {
  const holdUntil = hasStartDetails(call) ? undefined : now + holdEndedWithoutStartMs;
  return plan(
    {
      ...call,
      failed: false,
      holdExpired: undefined,
      cardToHide: undefined,
      consecutiveFailures: 0,
      retryAt: undefined,
      stepsSent: {},
      refused: undefined,
      batchLimit: undefined,
      holdUntil,
      updatedAt: now,
    },
    now,
  );
}

export function countSent(call: CallRecord, steps: PortalStep[]): CallRecord {
  const stepsSent = { ...call.stepsSent };
  for (const step of steps) stepsSent[step] = (stepsSent[step] ?? 0) + 1;
  return { ...call, attempts: call.attempts + steps.length, stepsSent };
}

function succeeded(call: CallRecord, now: number): CallRecord {
  return {
    ...call,
    consecutiveFailures: 0,
    retryAt: undefined,
    batchLimit: undefined,
    lastError: undefined,
    updatedAt: now,
  };
}
