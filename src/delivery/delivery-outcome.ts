import { CallRecord, PortalStep, withDelivery } from '../calls/call';
import {
  markCardHidden,
  markCardShown,
  markFailed,
  markFinished,
  markFinishFailed,
  markRecordAttached,
  markRecordFailed,
  markRegistered,
  markRetry,
  plan as replan,
  routeToDefaultUser,
} from '../calls/call-lifecycle';
import {
  addedTaskId,
  foundTaskId,
  isTaskStep,
  taskAddsCleared,
  taskCompleted,
  taskCreated,
  taskGivenUp,
  taskLookupAgainAt,
} from '../calls/missed-call-task';
import {
  attachedTranscriptId,
  foundTranscriptId,
  transcriptAttached,
  transcriptFailed,
  transcriptSendsCleared,
  withTranscriptDue,
} from '../calls/call-transcript';
import { PortalError, PortalErrorKind } from '../portal/portal-error';
import { PlannedCommand } from '../calls/step-planner';
import { backoffMs } from './backoff';

export interface OutcomeSettings {
  now: number;
  defaultUserId?: number;
  maxBackoffMs: number;
  /** Refusals of one call's step before it is given up (DELIVERY_MAX_ATTEMPTS). */
  maxAttempts: number;
  /** TRANSCRIBE_URL (and in multi mode the portal's `transcribe`): an attached held recording is transcribed. */
  transcribe?: boolean;
}

export interface CommandAnswer {
  result?: unknown;
  error?: PortalError;
}

/** The request a whole-request failure refused: its command count, and this call's commands in it. */
export interface RefusedRequest {
  commandCount: number;
  commands: PlannedCommand[];
}

interface RegisterResult {
  CALL_ID?: string;
  CRM_ENTITY_TYPE?: string;
  CRM_ENTITY_ID?: number | string | null;
  CRM_CREATED_LEAD?: number | string | null;
}

const UNKNOWN_EMPLOYEE = /USER_ID or USER_PHONE_INNER should be set/i;
/** A register named an internal number the portal knows no active employee for. */
export function namesUnknownEmployee(error: PortalError | undefined): boolean {
  return error !== undefined && UNKNOWN_EMPLOYEE.test(error.description);
}

const ALREADY_FINISHED = /Call is not found \(call should be registered prior to finishing/i;

/**
 * A command failing on its own with these (while the rest of its batch was answered) is the call's own
 * trouble, so it counts towards giving the step up; budget, operation-time and token errors are the portal's.
 */
const COMMAND_FAULTS: ReadonlySet<PortalErrorKind> = new Set(['server', 'network', 'timeout']);

/**
 * Whether a request was refused for what it carries: a 4xx that is not about credentials, rights or limits
 * (a bad body, or a proxy or firewall in front of the portal objecting to one call's text). The portal
 * names its rights errors (insufficient_scope, ACCESS_DENIED); a 403 without a code is not the portal's.
 */
export function refusedForContent(error: PortalError): boolean {
  return error.kind === 'invalid' || (error.kind === 'rights' && error.code === '');
}

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
    // A show riding with the register counts only once the register is through.
    else if (step === 'show') next = next.portal.callId ? afterShow(next, answer, settings) : next;
    else if (step === 'hide') next = afterHide(next, answer, settings);
    else if (isTaskStep(step)) next = afterTaskStep(next, step, answer, settings);
    else if (step === 'attachTranscription' || step === 'findTranscript') {
      next = afterTranscriptStep(next, step, answer, settings);
    }
    // attachRecord rides with finish; it only counts once the finish is through (uploadRecord goes after).
    else if (next.portal.finished) next = afterAttach(next, answer, settings);
    // Card moves and the recording do not hold up what follows them; a failed register or finish does.
    if (answer.error && (step === 'register' || step === 'finish')) break;
  }
  return next;
}

/**
 * The whole request failed: every call in it is retried later (or at the portal's reset time). A request
 * refused for its content is split: its calls go in requests of half its size next time, down to one
 * command alone, whose refusals count towards giving that step up; the other calls go on.
 */
export function applyRequestFailure(
  call: CallRecord,
  error: PortalError,
  settings: OutcomeSettings,
  request?: RefusedRequest,
): CallRecord {
  // A request carrying this call's file that timed out or broke off may be too big for the link: counted
  // like a refusal, so after DELIVERY_MAX_ATTEMPTS the call ends with the reason instead of retrying forever.
  if (request && COMMAND_FAULTS.has(error.kind) && carriesUpload(request)) {
    return refuse(call, 'uploadRecord', error, settings);
  }
  if (!request || !refusedForContent(error)) return retry(call, error, settings);
  if (request.commandCount > 1) {
    return retry(withDelivery(call, { batchLimit: Math.ceil(request.commandCount / 2) }), error, settings);
  }
  return refuse(call, request.commands[0].step, error, settings);
}

function carriesUpload(request: RefusedRequest): boolean {
  return request.commands.some((command) => command.step === 'uploadRecord');
}

function afterRegister(call: CallRecord, answer: CommandAnswer, settings: OutcomeSettings): CallRecord {
  const { error } = answer;
  if (!error) {
    const result = (answer.result ?? {}) as RegisterResult;
    if (!result.CALL_ID) {
      return markFailed(call, 'register: the portal answered without a CALL_ID', settings.now);
    }
    return markRegistered(
      call,
      {
        callId: result.CALL_ID,
        entityType: result.CRM_ENTITY_TYPE || undefined,
        entityId: toId(result.CRM_ENTITY_ID),
        createdLead: toId(result.CRM_CREATED_LEAD),
      },
      settings.now,
    );
  }
  if (error.retryable) return retryCommand(call, 'register', error, settings);
  const unknownEmployee = UNKNOWN_EMPLOYEE.test(error.description) && call.portal.user?.USER_PHONE_INNER;
  // The line's own default employee (LINES) before B24_DEFAULT_USER_ID.
  const lineUser = call.portal.lineTerms?.defaultUserId;
  const defaultUserId = lineUser ?? settings.defaultUserId;
  if (unknownEmployee && defaultUserId !== undefined) {
    const named = lineUser !== undefined ? `the line's defaultUserId` : 'B24_DEFAULT_USER_ID';
    const reason = `the portal knows no active employee with internal number ${call.portal.user?.USER_PHONE_INNER}; routed to ${named} ${defaultUserId}`;
    return routeToDefaultUser(call, defaultUserId, reason, settings.now);
  }
  return markFailed(call, `register: ${error.message}`, settings.now);
}

function afterFinish(call: CallRecord, answer: CommandAnswer, settings: OutcomeSettings): CallRecord {
  const { error } = answer;
  if (!error) return markFinished(call, settings.now);
  if (error.retryable) return retryCommand(call, 'finish', error, settings);
  // A finish sent before whose answer was lost: the portal already finished the call.
  if (ALREADY_FINISHED.test(error.description) && (call.delivery.stepsSent.finish ?? 0) > 1) {
    return markFinished(call, settings.now);
  }
  return markFinishFailed(call, `finish: ${error.message}`, settings.now);
}

function afterAttach(call: CallRecord, answer: CommandAnswer, settings: OutcomeSettings): CallRecord {
  const { error } = answer;
  if (!error) return markRecordAttached(settings.transcribe ? withTranscriptDue(call) : call, settings.now);
  if (error.retryable) return retryCommand(call, 'attachRecord', error, settings);
  return markRecordFailed(call, `attachRecord: ${error.message}`, settings.now);
}

function afterShow(call: CallRecord, answer: CommandAnswer, settings: OutcomeSettings): CallRecord {
  const { error } = answer;
  if (!error) return markCardShown(call, settings.now);
  if (error.retryable) return retryCommand(call, 'show', error, settings);
  return markCardShown(call, settings.now, `show: ${error.message}`);
}

function afterHide(call: CallRecord, answer: CommandAnswer, settings: OutcomeSettings): CallRecord {
  const { error } = answer;
  if (!error) return markCardHidden(call, settings.now);
  if (error.retryable) return retryCommand(call, 'hide', error, settings);
  return markCardHidden(call, settings.now, `hide: ${error.message}`);
}

/** One command failed on its own with a retryable error: retried, and counted unless the portal was at fault. */
function retryCommand(
  call: CallRecord,
  step: PortalStep,
  error: PortalError,
  settings: OutcomeSettings,
): CallRecord {
  return COMMAND_FAULTS.has(error.kind) ? refuse(call, step, error, settings) : retry(call, error, settings);
}

/** The portal refused this call's step itself: retried with backoff until DELIVERY_MAX_ATTEMPTS, then given up. */
function refuse(
  call: CallRecord,
  step: PortalStep,
  error: PortalError,
  settings: OutcomeSettings,
): CallRecord {
  const times = (call.delivery.refused?.[step] ?? 0) + 1;
  const counted = withDelivery(call, { refused: { ...call.delivery.refused, [step]: times } });
  if (times < settings.maxAttempts) return retry(counted, error, settings);
  const reason = `${step}: ${error.message} (refused ${times} times)`;
  if (step === 'finish') return markFinishFailed(counted, reason, settings.now);
  if (step === 'attachRecord' || step === 'uploadRecord') {
    return markRecordFailed(counted, reason, settings.now);
  }
  if (step === 'hide') return markCardHidden(counted, settings.now, reason);
  if (step === 'show') return markCardShown(counted, settings.now, reason);
  if (isTaskStep(step)) return replan(taskGivenUp(counted, reason), settings.now);
  if (step === 'attachTranscription' || step === 'findTranscript') {
    return replan(transcriptFailed(counted, `transcript: ${reason}`), settings.now);
  }
  return markFailed(counted, reason, settings.now);
}

function retry(call: CallRecord, error: PortalError, settings: OutcomeSettings): CallRecord {
  const retryAt =
    error.resumeAt ?? settings.now + backoffMs(call.delivery.consecutiveFailures + 1, settings.maxBackoffMs);
  // A parked call closing its card keeps the reason it was parked for.
  const reason =
    call.delivery.failed && call.delivery.lastError ? call.delivery.lastError : `${error.message} (retrying)`;
  return markRetry(call, reason, retryAt, settings.now);
}

/**
 * A missed-call task's step was answered. An add answered with an error made no task; an add whose answer
 * never came (the whole request failed, `applyRequestFailure`) leaves its count above the cleared one, so
 * the call's next step is a lookup, not a second add. A task refused for good leaves the call finished,
 * with the reason.
 */
function afterTaskStep(
  call: CallRecord,
  step: PortalStep,
  answer: CommandAnswer,
  settings: OutcomeSettings,
): CallRecord {
  const { error, result } = answer;
  const now = settings.now;
  if (step === 'addTask') {
    if (!error) {
      const id = addedTaskId(result);
      if (id !== undefined) return replan(taskCreated(succeededTask(call, now), id), now);
      // An answer without an id: the task may exist, so the next step looks for it.
      return retry(
        call,
        new PortalError('server', 'NO_TASK_ID', 'tasks.task.add answered without a task id'),
        settings,
      );
    }
    const cleared = taskAddsCleared(call);
    if (error.retryable) return retryCommand(cleared, step, error, settings);
    return replan(taskGivenUp(cleared, `addTask: ${error.message}`), now);
  }
  if (step === 'findTask') {
    if (error) {
      if (error.retryable) return retryCommand(call, step, error, settings);
      return replan(taskGivenUp(call, `findTask: ${error.message}`), now);
    }
    const id = foundTaskId(call, result);
    if (id === undefined) {
      // The lost add may still be creating the task on the portal: look again once it has settled.
      const again = taskLookupAgainAt(call, now);
      if (again !== undefined) return replan(withDelivery(succeededTask(call, now), { retryAt: again }), now);
    }
    const found = id === undefined ? taskAddsCleared(call) : taskCreated(call, id);
    return replan(succeededTask(found, now), now);
  }
  if (!error) return replan(taskCompleted(succeededTask(call, now)), now);
  if (error.retryable) return retryCommand(call, step, error, settings);
  // A completion sent before whose answer was lost: the portal may refuse to complete it again.
  if ((call.delivery.stepsSent.completeTask ?? 0) > 1) {
    return replan(taskCompleted(succeededTask(call, now)), now);
  }
  return replan(taskGivenUp(call, `completeTask: ${error.message}`), now);
}

/**
 * The transcript's attach or look was answered. An attach answered with an error made no transcript (its
 * send is cleared); one whose answer never came leaves the send uncleared, so the next step looks at the
 * call's statistics before sending again. A look that finds no TRANSCRIPT_ID clears the sends.
 */
function afterTranscriptStep(
  call: CallRecord,
  step: 'attachTranscription' | 'findTranscript',
  answer: CommandAnswer,
  settings: OutcomeSettings,
): CallRecord {
  const { error, result } = answer;
  const now = settings.now;
  if (step === 'attachTranscription') {
    if (!error) {
      return replan(transcriptAttached(succeededTask(call, now), attachedTranscriptId(result)), now);
    }
    if (error.retryable) return retryCommand(call, step, error, settings);
    return refuse(transcriptSendsCleared(call), step, error, settings);
  }
  if (error) {
    if (error.retryable) return retryCommand(call, step, error, settings);
    return refuse(call, step, error, settings);
  }
  const id = foundTranscriptId(call, result);
  const found = id === undefined ? transcriptSendsCleared(call) : transcriptAttached(call, id);
  return replan(succeededTask(found, now), now);
}

/** A task step went through: a retry's note goes; a reason the call kept from before (a recording) stays. */
function succeededTask(call: CallRecord, now: number): CallRecord {
  const delivery = {
    ...call.delivery,
    consecutiveFailures: 0,
    retryAt: undefined,
    batchLimit: undefined,
    lastError: call.delivery.consecutiveFailures > 0 ? undefined : call.delivery.lastError,
  };
  return { ...call, delivery, updatedAt: now };
}

function toId(value: number | string | null | undefined): number | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  const id = Number(value);
  return Number.isFinite(id) ? id : undefined;
}
