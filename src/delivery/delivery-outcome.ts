import { CallRecord } from '../calls/call';
import {
  markFailed,
  markFinished,
  markRecordAttached,
  markRecordFailed,
  markRegistered,
  markRetry,
  routeToDefaultUser,
} from '../calls/call-lifecycle';
import { PortalError } from '../portal/portal-error';
import { PlannedCommand } from './batch-plan';
import { backoffMs } from './backoff';

export interface OutcomeSettings {
  now: number;
  defaultUserId?: number;
  maxBackoffMs: number;
}

export interface CommandAnswer {
  result?: unknown;
  error?: PortalError;
}

interface RegisterResult {
  CALL_ID?: string;
  CRM_ENTITY_TYPE?: string;
  CRM_ENTITY_ID?: number | string | null;
  CRM_CREATED_LEAD?: number | string | null;
}

const UNKNOWN_EMPLOYEE = /USER_ID or USER_PHONE_INNER should be set/i;
const ALREADY_FINISHED = /Call is not found \(call should be registered prior to finishing/i;

/** Applies the portal's answers to one call's commands of a batch, in their order. */
export function applyAnswers(
  call: CallRecord,
  commands: PlannedCommand[],
  answers: Map<string, CommandAnswer>,
  settings: OutcomeSettings,
): CallRecord {
  let next = call;
  for (const { label, step } of commands) {
    const answer = answers.get(label) ?? {};
    if (step === 'register') next = afterRegister(next, answer, settings);
    else if (step === 'finish') next = afterFinish(next, answer, settings);
    // attachRecord rides with finish; it only counts once the finish is through.
    else if (next.finishedOnPortal) next = afterAttach(next, answer, settings);
    if (answer.error && step !== 'attachRecord') break;
  }
  return next;
}

/** The whole request failed: every call in it is retried later (or at the portal's reset time). */
export function applyRequestFailure(
  call: CallRecord,
  error: PortalError,
  settings: OutcomeSettings,
): CallRecord {
  return retry(call, error, settings);
}

function afterRegister(call: CallRecord, answer: CommandAnswer, settings: OutcomeSettings): CallRecord {
  const { error } = answer;
  if (!error) {
    const result = (answer.result ?? {}) as RegisterResult;
    if (!result.CALL_ID)
      return markFailed(call, 'register: the portal answered without a CALL_ID', settings.now);
    return markRegistered(
      call,
      {
        portalCallId: result.CALL_ID,
        crmEntityType: result.CRM_ENTITY_TYPE || undefined,
        crmEntityId: toId(result.CRM_ENTITY_ID),
        createdLead: toId(result.CRM_CREATED_LEAD),
      },
      settings.now,
    );
  }
  if (error.retryable) return retry(call, error, settings);
  const unknownEmployee = UNKNOWN_EMPLOYEE.test(error.description) && call.portalUser?.USER_PHONE_INNER;
  if (unknownEmployee && settings.defaultUserId !== undefined) {
    const reason = `the portal knows no active employee with internal number ${call.portalUser?.USER_PHONE_INNER}; routed to B24_DEFAULT_USER_ID ${settings.defaultUserId}`;
    return routeToDefaultUser(call, settings.defaultUserId, reason, settings.now);
  }
  return markFailed(call, `register: ${error.message}`, settings.now);
}

function afterFinish(call: CallRecord, answer: CommandAnswer, settings: OutcomeSettings): CallRecord {
  const { error } = answer;
  if (!error) return markFinished(call, settings.now);
  if (error.retryable) return retry(call, error, settings);
  // A finish sent before whose answer was lost: the portal already finished the call.
  if (ALREADY_FINISHED.test(error.description) && (call.stepsSent.finish ?? 0) > 1) {
    return markFinished(call, settings.now);
  }
  return markFailed(call, `finish: ${error.message}`, settings.now);
}

function afterAttach(call: CallRecord, answer: CommandAnswer, settings: OutcomeSettings): CallRecord {
  const { error } = answer;
  if (!error) return markRecordAttached(call, settings.now);
  if (error.retryable) return retry(call, error, settings);
  return markRecordFailed(call, `attachRecord: ${error.message}`, settings.now);
}

function retry(call: CallRecord, error: PortalError, settings: OutcomeSettings): CallRecord {
  const retryAt =
    error.resumeAt ?? settings.now + backoffMs(call.consecutiveFailures + 1, settings.maxBackoffMs);
  return markRetry(call, `${error.message} (retrying)`, retryAt, settings.now);
}

function toId(value: number | string | null | undefined): number | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  const id = Number(value);
  return Number.isFinite(id) ? id : undefined;
}
