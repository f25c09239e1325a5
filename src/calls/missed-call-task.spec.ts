import { CallRecord, withParty, withPortal } from './call';
import { applyEvent, deliveryPriority, newCall, plan } from './call-lifecycle';
import {
  addTaskParams,
  answeredAtOf,
  awaitingCallback,
  countTaskAdd,
  crmTaskBinding,
  findTaskParams,
  foundTaskId,
  markCalledBack,
  missedTaskStep,
  taskAddsCleared,
  TASK_ADD_SETTLE_MS,
  taskCreated,
  taskLookupAgainAt,
  taskMarker,
  withMissedTask,
} from './missed-call-task';
import { registerParams } from './portal-commands';
import { planBatch } from './step-planner';

const HOUR_MS = 3_600_000;
const settings = { now: 1000, holdEndedWithoutStartMs: 60_000, missedCallTaskDeadlineMs: HOUR_MS };

/** An inbound call that ended with `status`, as intake stores it. */
function ended(status: 'missed' | 'busy' | 'cancelled' | 'answered' | 'declined', callId = 'm1'): CallRecord {
  const started = applyEvent(
    newCall('portal', callId, 0),
    {
      event: 'call.started',
      callId,
      direction: 'inbound',
      phoneNumber: '+4930555',
      extension: '101',
      at: '2026-11-22T10:00:00+01:00',
    },
    settings,
  );
  return applyEvent(
    started,
    { event: 'call.ended', callId, at: '2026-11-22T10:00:40+01:00', durationSec: 0, status },
    settings,
  );
}

/** The call once the portal finished it. */
function finished(call: CallRecord): CallRecord {
  return plan({ ...call, portal: { ...call.portal, callId: 'externalCall.1', finished: true } }, 2000);
}

describe('missed-call tasks', () => {
  it('gives missed, busy and cancelled inbound calls a task due an hour after their end, offset kept', () => {
    for (const status of ['missed', 'busy', 'cancelled'] as const) {
      expect(ended(status).task).toEqual({ deadline: '2026-11-22T11:00:40+01:00' });
    }
    expect(ended('answered').task).toBeUndefined();
    expect(ended('declined').task).toBeUndefined();
    const outbound = withParty({ ...ended('missed'), task: undefined }, { direction: 'outbound' as const });
    expect(withMissedTask(outbound, HOUR_MS).task).toBeUndefined();
    // MISSED_CALL_TASK off: no deadline setting, no task.
    expect(withMissedTask({ ...ended('missed'), task: undefined }, undefined).task).toBeUndefined();
  });

  it('adds the task only once the call is finished, after everything else, in priority class 2', () => {
    const call = ended('missed');
    expect(call.delivery.nextStep).toBe('register');
    const done = finished(call);
    expect(done.delivery.nextStep).toBe('addTask');
    expect(deliveryPriority(done)).toBe(2);
    // A ringing call's register (class 0) and a finish (class 1) go first when not all fit.
    const ringing = applyEvent(
      newCall('portal', 'r1', 0),
      {
        event: 'call.started',
        callId: 'r1',
        direction: 'inbound',
        phoneNumber: '+4930556',
        extension: '102',
        at: '2026-11-22T10:05:00+01:00',
      },
      settings,
    );
    const toFinish = plan(withPortal(ended('missed', 'f1'), { callId: 'externalCall.2' }), 2000);
    const { plan: batch } = planBatch([done, toFinish, ringing], { maxCommands: 2 });
    expect(batch.entries.map((entry) => entry.commands[0].step)).toEqual(['register', 'finish']);
  });

  it('a lookup that finds nothing while the lost add may still be running looks again once it has settled', () => {
    let call = finished(ended('missed'));
    call = countTaskAdd({ ...call, task: { ...call.task!, responsibleId: 3 } }, 5000);
    expect(call.task?.lastAddAt).toBe(5000);
    expect(taskLookupAgainAt(call, 6500)).toBe(5000 + TASK_ADD_SETTLE_MS);
    expect(taskLookupAgainAt(call, 5000 + TASK_ADD_SETTLE_MS)).toBeUndefined();
    expect(taskLookupAgainAt(finished(ended('missed')), 6500)).toBeUndefined();
  });

  it('looks for the task before adding again when an add may have gone through', () => {
    let call = finished(ended('missed'));
    call = countTaskAdd({ ...call, task: { ...call.task!, responsibleId: 3 } }, 5000);
    expect(call.task).toMatchObject({ addsSent: 1, firstTriedAt: 5000 });
    // The answer never came: the next step is the lookup.
    expect(missedTaskStep(call)).toBe('findTask');
    // The lookup found nothing: those adds made no task, so adding again is safe.
    expect(missedTaskStep(taskAddsCleared(call))).toBe('addTask');
    // Found (or the add's answer told the id): nothing more until a callback.
    const created = taskCreated(call, 42);
    expect(missedTaskStep(created)).toBeUndefined();
    const calledBack = markCalledBack(created, 'c2', Date.parse('2026-11-22T10:30:00+01:00'));
    expect(missedTaskStep(calledBack)).toBe('completeTask');
    expect(missedTaskStep({ ...calledBack, task: { ...calledBack.task!, completed: true } })).toBe(undefined);
  });

  it('names the number, the responsible, the deadline, the CRM record and a stable marker', () => {
    const call = withPortal(finished(ended('missed')), { entityType: 'CONTACT', entityId: 7 });
    const withTask = { ...call, task: { ...call.task!, responsibleId: 3, clientName: 'Erika M' } };
    const { fields } = addTaskParams(withTask) as { fields: Record<string, unknown> };
    expect(fields).toMatchObject({
      TITLE: 'Missed call from +4930555 (Erika M)',
      RESPONSIBLE_ID: 3,
      DEADLINE: '2026-11-22T11:00:40+01:00',
      UF_CRM_TASK: ['C_7'],
      XML_ID: taskMarker('portal', 'm1'),
    });
    expect(fields.DESCRIPTION).toContain('2026-11-22T10:00:00+01:00');
    expect(fields.DESCRIPTION).toContain('Line/extension: 101');
    expect(taskMarker('portal', 'm1')).toBe(taskMarker('portal', 'm1'));
    expect(taskMarker('portal', 'm1')).not.toBe(taskMarker('other', 'm1'));
    expect(crmTaskBinding({ ...call, portal: { ...call.portal, entityType: 'COMPANY' } })).toBe('CO_7');
    expect(
      crmTaskBinding({ ...call, portal: { ...call.portal, entityType: undefined, createdLead: 9 } }),
    ).toBe('L_9');
    expect(findTaskParams(withTask)).toMatchObject({
      filter: { XML_ID: taskMarker('portal', 'm1'), RESPONSIBLE_ID: 3 },
    });
  });

  it("takes only a listed task carrying the call's marker (or, without any marker, its title)", () => {
    const call = { ...finished(ended('missed')) };
    const marker = taskMarker('portal', 'm1');
    expect(foundTaskId(call, { tasks: [] })).toBeUndefined();
    expect(
      foundTaskId(call, { tasks: [{ id: '4', xmlId: 'someone-else', title: 'Missed call from +4930555' }] }),
    ).toBe(undefined);
    expect(
      foundTaskId(call, {
        tasks: [
          { id: '9', xmlId: marker },
          { id: '5', xmlId: marker },
        ],
      }),
    ).toBe(5);
    expect(foundTaskId(call, { tasks: [{ id: '6', title: 'Missed call from +4930555' }] })).toBe(6);
    expect(foundTaskId(call, [])).toBeUndefined();
  });

  it('is completed by the next answered call from the number before the deadline only', () => {
    const call = taskCreated(finished(ended('missed')), 42);
    expect(awaitingCallback(call)).toEqual({
      phone: '+4930555',
      until: Date.parse('2026-11-22T11:00:40+01:00'),
    });
    const at = (iso: string) => Date.parse(iso);
    expect(markCalledBack(call, 'c2', at('2026-11-22T11:00:39+01:00')).task?.calledBackBy).toBe('c2');
    expect(markCalledBack(call, 'c2', at('2026-11-22T11:00:40+01:00'))).toBe(call);
    // Answered before this call even ended: not a callback.
    expect(markCalledBack(call, 'c2', at('2026-11-22T10:00:10+01:00'))).toBe(call);
    expect(markCalledBack(call, 'm1', at('2026-11-22T10:30:00+01:00'))).toBe(call);
    const calledBack = markCalledBack(call, 'c2', at('2026-11-22T10:30:00+01:00'));
    expect(awaitingCallback(calledBack)).toBeUndefined();
  });

  it('reads when an event says its call was answered', () => {
    expect(answeredAtOf({ event: 'call.answered', callId: 'a', at: '2026-11-22T10:00:00Z' })).toBe(
      Date.parse('2026-11-22T10:00:00Z'),
    );
    expect(
      answeredAtOf({
        event: 'call.ended',
        callId: 'a',
        at: '2026-11-22T10:01:00Z',
        durationSec: 60,
        status: 'answered',
      }),
    ).toBe(Date.parse('2026-11-22T10:00:00Z'));
    expect(
      answeredAtOf({ event: 'call.ended', callId: 'a', at: '2026-11-22T10:01:00Z', status: 'missed' }),
    ).toBeUndefined();
    expect(answeredAtOf({ event: 'call.started', callId: 'a', at: '2026-11-22T10:01:00Z' })).toBeUndefined();
  });

  it('a withheld caller: registered with CRM_CREATE=0, a task that names no number and awaits no callback', () => {
    const call = withParty(ended('missed'), { phoneNumber: 'anonymous' });
    expect(registerParams(call, { USER_ID: 2 })).toMatchObject({ PHONE_NUMBER: 'anonymous', CRM_CREATE: 0 });
    expect(registerParams(ended('missed'), { USER_ID: 2 })).toMatchObject({ CRM_CREATE: 1 });
    const fields = (
      addTaskParams({ ...call, task: { ...call.task!, responsibleId: 2 } }) as {
        fields: Record<string, unknown>;
      }
    ).fields;
    expect(fields.TITLE).toBe('Missed call from a withheld number');
    expect(fields.DESCRIPTION).toMatch(/no number to call back/);
    expect(awaitingCallback(call)).toBeUndefined();
    expect(markCalledBack(call, 'other', Date.parse('2026-11-22T10:05:00+01:00'))).toBe(call);
  });
});
