import { createHash } from 'node:crypto';
import { DateTime } from 'luxon';
import { CallEvent, CallRecord, EndStatus, MissedTask, PortalStep, withDelivery, withTask } from './call';
import { isWithheld } from '../common/phone-number';
import { PortalParams } from './portal-commands';

/**
 * Missed-call tasks (docs/API.md), pure: which calls get one, what `tasks.task.add` / `list` / `complete`
 * carry, and what each answer does to the call's task. The add is not idempotent on the portal, so a
 * call whose add may have gone through without an answer looks for its task (`findTask`, by `XML_ID`)
 * before it adds again; the count of adds sent is stored before each is sent.
 */

/** The steps of a missed-call task; they go after everything else a call has (priority class 2). */
export const TASK_STEPS: readonly PortalStep[] = ['addTask', 'findTask', 'completeTask'];

/** Their priority class: below history (1), so they never delay a ringing call's card or a finish. */
export const TASK_PRIORITY = 2;

const MISSED: readonly EndStatus[] = ['missed', 'busy', 'cancelled'];

/** A lookup looks for tasks created since this long before the first add (the portal's clock may differ). */
const LOOKUP_MARGIN_MS = 15 * 60 * 1000;

/**
 * How long after an add whose answer was lost the portal may still be creating its task: the bridge gave
 * up on the request (B24_TIMEOUT_MS, 15 s by default) but the portal goes on with it. A lookup that finds
 * nothing before then proves nothing, so the add is not repeated until a lookup after it finds nothing.
 */
export const TASK_ADD_SETTLE_MS = 60_000;

export type MissedTaskState = 'pending' | 'created' | 'completed' | 'failed';

export function isTaskStep(step: PortalStep | undefined): boolean {
  return step !== undefined && TASK_STEPS.includes(step);
}

/** An inbound call that ended missed, busy or cancelled. */
export function isMissedInbound(call: CallRecord): boolean {
  return (
    call.party.direction === 'inbound' &&
    call.party.ended !== undefined &&
    MISSED.includes(call.party.ended.status)
  );
}

/**
 * With MISSED_CALL_TASK (`deadlineMs` set): a missed inbound call is given its task, once; the deadline is
 * its end plus `deadlineMs`, keeping the PBX's offset.
 */
export function withMissedTask(call: CallRecord, deadlineMs: number | undefined): CallRecord {
  if (deadlineMs === undefined || call.task || !isMissedInbound(call)) return call;
  const end = DateTime.fromISO(call.party.ended!.at, { setZone: true });
  const deadline = end.plus({ milliseconds: deadlineMs }).toISO({ suppressMilliseconds: true });
  return { ...call, task: { deadline: deadline ?? call.party.ended!.at } };
}

/** What is next for the call's task once the call is finished on the portal, if anything. */
export function missedTaskStep(call: CallRecord): PortalStep | undefined {
  const task = call.task;
  if (!task || task.failed || !call.portal.finished) return undefined;
  if (task.id === undefined) return (task.addsSent ?? 0) > (task.addsCleared ?? 0) ? 'findTask' : 'addTask';
  if (task.calledBackAt !== undefined && !task.completed) return 'completeTask';
  return undefined;
}

export function missedTaskState(task: MissedTask): MissedTaskState {
  if (task.failed) return 'failed';
  if (task.completed) return 'completed';
  return task.id === undefined ? 'pending' : 'created';
}

/**
 * The task's marker on the portal: a stable hash of (portal, call), so a lookup finds the task an add
 * whose answer was lost made, and nothing else.
 */
export function taskMarker(portalId: string, callId: string): string {
  const digest = createHash('sha256').update(`${portalId}\u001f${callId}`).digest('hex');
  return `pbx-bridge-missed-${digest.slice(0, 32)}`;
}

export function taskTitle(call: CallRecord): string {
  const client = call.task?.clientName;
  return `Missed call from ${caller(call)}${client ? ` (${client})` : ''}`;
}

/** Who called, as a task names them: the number, or that it was withheld (no number to claim). */
function caller(call: CallRecord): string {
  return isWithheld(call.party.phoneNumber) ? 'a withheld number' : String(call.party.phoneNumber);
}

function taskDescription(call: CallRecord): string {
  const client = call.task?.clientName;
  const line = call.party.ringing?.length ? call.party.ringing.join(', ') : (call.party.extension ?? '—');
  const ask = isWithheld(call.party.phoneNumber)
    ? 'The caller withheld their number: there is no number to call back.'
    : `Please call back before ${call.task!.deadline}.`;
  return [
    `Inbound call from ${caller(call)}${client ? ` (${client})` : ''}, ${call.party.ended!.status}.`,
    `Rang at ${call.party.startedAt}, ended at ${call.party.ended!.at}.`,
    `Line/extension: ${line}. PBX call id: ${call.callId}.`,
    ask,
  ].join('\n');
}

const CRM_PREFIX: Record<string, string> = { CONTACT: 'C', COMPANY: 'CO', LEAD: 'L', DEAL: 'D' };

/** The CRM record the register bound the call to or created (`C_5`, `CO_2`, `L_9`), if any. */
export function crmTaskBinding(call: CallRecord): string | undefined {
  const prefix = call.portal.entityType ? CRM_PREFIX[call.portal.entityType] : undefined;
  if (prefix && call.portal.entityId !== undefined) return `${prefix}_${call.portal.entityId}`;
  return call.portal.createdLead !== undefined ? `L_${call.portal.createdLead}` : undefined;
}

export function addTaskParams(call: CallRecord): PortalParams {
  const task = call.task!;
  const binding = crmTaskBinding(call);
  return {
    fields: {
      TITLE: taskTitle(call),
      DESCRIPTION: taskDescription(call),
      RESPONSIBLE_ID: task.responsibleId,
      DEADLINE: task.deadline,
      XML_ID: taskMarker(call.portalId, call.callId),
      ...(binding ? { UF_CRM_TASK: [binding] } : {}),
    },
  };
}

/**
 * Looks for the task by its marker. The portal's filter by `XML_ID` is not confirmed on real portals, so
 * the filter also narrows by responsible and creation time, and the answer's rows are checked again
 * (`foundTaskId`): a portal ignoring the marker filter cannot make a stranger's task ours.
 */
export function findTaskParams(call: CallRecord): PortalParams {
  const task = call.task!;
  const since = new Date((task.firstTriedAt ?? 0) - LOOKUP_MARGIN_MS).toISOString();
  return {
    filter: {
      XML_ID: taskMarker(call.portalId, call.callId),
      RESPONSIBLE_ID: task.responsibleId,
      '>=CREATED_DATE': since,
    },
    select: ['ID', 'TITLE', 'XML_ID', 'RESPONSIBLE_ID', 'CREATED_DATE'],
    order: { ID: 'ASC' },
  };
}

export function completeTaskParams(call: CallRecord): PortalParams {
  return { taskId: call.task!.id };
}

/** The task id in `tasks.task.add`'s answer (`{"task": {"id": …}}`). */
export function addedTaskId(result: unknown): number | undefined {
  const task = (result as { task?: Record<string, unknown> } | undefined)?.task;
  return toId(task?.id ?? task?.ID);
}

/**
 * The id of our task among `tasks.task.list`'s rows: the row with our marker; a row that carries no marker
 * at all counts when its title is ours (a portal that does not keep `XML_ID`). The oldest one wins.
 */
export function foundTaskId(call: CallRecord, result: unknown): number | undefined {
  const rows = (result as { tasks?: unknown } | undefined)?.tasks;
  if (!Array.isArray(rows)) return undefined;
  const marker = taskMarker(call.portalId, call.callId);
  const title = taskTitle(call);
  const ids = rows.flatMap((row: Record<string, unknown>) => {
    const rowMarker = row.xmlId ?? row.XML_ID;
    const ours = rowMarker ? rowMarker === marker : (row.title ?? row.TITLE) === title;
    const id = ours ? toId(row.id ?? row.ID) : undefined;
    return id === undefined ? [] : [id];
  });
  return ids.length > 0 ? Math.min(...ids) : undefined;
}

/** The add is about to be sent: counted first, so a lost answer is followed by a lookup, not a repeat. */
export function countTaskAdd(call: CallRecord, now: number): CallRecord {
  const task = call.task!;
  return withTask(call, {
    addsSent: (task.addsSent ?? 0) + 1,
    firstTriedAt: task.firstTriedAt ?? now,
    lastAddAt: now,
  });
}

export function taskCreated(call: CallRecord, id: number): CallRecord {
  return withTask(call, { id });
}

/**
 * A lookup found no task: when the latest add may still be in the portal's hands (sent less than
 * TASK_ADD_SETTLE_MS ago), the time to look again; undefined when nothing found now means no task.
 */
export function taskLookupAgainAt(call: CallRecord, now: number): number | undefined {
  const sentAt = call.task?.lastAddAt;
  if (sentAt === undefined) return undefined;
  const settledAt = sentAt + TASK_ADD_SETTLE_MS;
  return settledAt > now ? settledAt : undefined;
}

/** The adds sent so far made no task (the portal answered them with an error, or a lookup found none). */
export function taskAddsCleared(call: CallRecord): CallRecord {
  return withTask(call, { addsCleared: call.task!.addsSent ?? 0 });
}

export function taskCompleted(call: CallRecord): CallRecord {
  return withTask(call, { completed: true });
}

/** The task is given up; the call itself stays as it is (finished), with the reason in `lastError`. */
export function taskGivenUp(call: CallRecord, reason: string): CallRecord {
  return withDelivery(withTask(call, { failed: reason }), { lastError: reason });
}

/**
 * The phone number whose next answered call completes this call's task, and until when (ms epoch): the
 * store keeps both in indexed columns, so intake finds the calls a callback answers on any replica. A
 * withheld number has none: another withheld call is nobody's callback.
 */
export function awaitingCallback(call: CallRecord): { phone: string; until: number } | undefined {
  const task = call.task;
  if (!task || task.failed || task.completed || task.calledBackAt !== undefined) return undefined;
  if (!call.party.phoneNumber || isWithheld(call.party.phoneNumber)) return undefined;
  return { phone: call.party.phoneNumber, until: Date.parse(task.deadline) };
}

/**
 * `answeredCallId` (from the same number) was answered at `answeredAt` (ms epoch): the task is completed
 * when that is after this call ended and before the task's deadline. Anything else leaves the call as is.
 */
export function markCalledBack(call: CallRecord, answeredCallId: string, answeredAt: number): CallRecord {
  const waiting = awaitingCallback(call);
  if (!waiting || call.callId === answeredCallId) return call;
  if (answeredAt >= waiting.until || answeredAt < Date.parse(call.party.ended!.at)) return call;
  return withTask(call, { calledBackAt: answeredAt, calledBackBy: answeredCallId });
}

/**
 * When a PBX event says its call was answered (ms epoch), if it does: `call.answered` at its time, an
 * answered `call.ended` (a CDR) at its end minus the talk time.
 */
export function answeredAtOf(event: CallEvent): number | undefined {
  let at = NaN;
  if (event.event === 'call.answered') at = Date.parse(event.at);
  else if (event.event === 'call.ended' && event.status === 'answered') {
    at = Date.parse(event.at) - (event.durationSec ?? 0) * 1000;
  }
  return Number.isFinite(at) ? at : undefined;
}

function toId(value: unknown): number | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  const id = Number(value);
  return Number.isInteger(id) && id > 0 ? id : undefined;
}
