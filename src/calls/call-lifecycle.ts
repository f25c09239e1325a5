import { DateTime } from 'luxon';
import { CallEvent, CallRecord, hasStartDetails, PortalStep, PortalUser } from './call';

/**
 * Pure rules of a call's life: how each PBX event changes the call, and what delivery does next.
 * The store runs these inside its transactions; nothing here does I/O.
 */

export interface LifecycleSettings {
  now: number;
  holdEndedWithoutStartMs: number;
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
  return plan(next, settings.now);
}

function applyStarted(call: CallRecord, event: CallEvent): void {
  call.heardStart = true;
  // A call already registered (or about to be) from a CDR keeps what it has: the start changes nothing.
  if (hasStartDetails(call)) return;
  call.direction = event.direction;
  call.phoneNumber = event.phoneNumber;
  call.startedAt = event.at;
  call.extension ??= event.extension;
  call.userId ??= event.userId;
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

function applyAnswered(call: CallRecord, event: CallEvent): void {
  call.answeredAt = event.at;
  call.answeredBy = event.extension ?? (event.userId !== undefined ? String(event.userId) : undefined);
}

function applyEnded(call: CallRecord, event: CallEvent, settings: LifecycleSettings): void {
  call.ended = {
    at: event.at,
    durationSec: event.durationSec ?? 0,
    status: event.status ?? 'answered',
    failedReason: event.failedReason,
    recordingUrl: event.recordingUrl,
  };
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
  if (call.failed) return call.cardToHide ? 'hide' : undefined;
  if (!hasStartDetails(call)) return call.ended ? 'wait-start' : undefined;
  if (!call.portalCallId) return 'register';
  if (call.ended && !call.finishedOnPortal) return 'finish';
  if (call.ended?.recordingUrl && !call.recordAttached && !call.recordFailed) return 'attachRecord';
  return undefined;
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

export function markRegistered(call: CallRecord, result: RegisteredOnPortal, now: number): CallRecord {
  return plan({ ...succeeded(call, now), ...result }, now);
}

export function markFinished(call: CallRecord, now: number): CallRecord {
  return plan({ ...succeeded(call, now), finishedOnPortal: true }, now);
}

export function markRecordAttached(call: CallRecord, now: number): CallRecord {
  return plan({ ...succeeded(call, now), recordAttached: true }, now);
}

/** A recording the portal refuses leaves the call finished, with the reason kept. */
export function markRecordFailed(call: CallRecord, reason: string, now: number): CallRecord {
  return plan({ ...succeeded(call, now), recordFailed: true, lastError: reason }, now);
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

/** The card is closed, or cannot be (`note` says why): the parked call keeps the finish's reason. */
export function markCardHidden(call: CallRecord, now: number, note?: string): CallRecord {
  const lastError = note ? `${call.lastError ?? ''}; ${note}` : call.lastError;
  return plan(
    {
      ...call,
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
