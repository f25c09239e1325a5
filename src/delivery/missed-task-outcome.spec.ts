import { CallRecord } from '../calls/call';
import { newCall, plan } from '../calls/call-lifecycle';
import { countTaskAdd, TASK_ADD_SETTLE_MS, taskMarker } from '../calls/missed-call-task';
import { classifyPortalError, PortalError } from '../portal/portal-error';
import { applyAnswers, applyRequestFailure } from './delivery-outcome';

const settings = { now: 10_000, maxBackoffMs: 2000, maxAttempts: 3 };

/** A missed call finished on the portal whose task add is being sent. */
function addingTask(extra: Partial<CallRecord> = {}): CallRecord {
  const call = plan(
    {
      ...newCall('p', 'm1', 0),
      direction: 'inbound',
      phoneNumber: '+4930555',
      startedAt: '2026-11-22T10:00:00+01:00',
      portalUser: { USER_ID: 2 },
      portalCallId: 'externalCall.1',
      finishedOnPortal: true,
      ended: { at: '2026-11-22T10:00:40+01:00', durationSec: 0, status: 'missed' },
      missedTask: { deadline: '2026-11-22T11:00:40+01:00', responsibleId: 3 },
      ...extra,
    },
    0,
  );
  return countTaskAdd({ ...call, stepsSent: { addTask: 1 } }, 5000);
}

const answer = (label: string, value: { result?: unknown; error?: PortalError }) => new Map([[label, value]]);

describe('missed-call task outcomes', () => {
  it('keeps the id an add answers; the call stays finished with nothing more due', () => {
    const call = applyAnswers(
      addingTask(),
      [{ step: 'addTask', label: 'addTask_0' }],
      answer('addTask_0', { result: { task: { id: '17' } } }),
      settings,
    );
    expect(call.missedTask?.id).toBe(17);
    expect(call.state).toBe('finished');
    expect(call.nextStep).toBeUndefined();
  });

  it('after a request whose answer never came, looks for the task instead of adding again', () => {
    const lost = new PortalError('network', 'ECONNRESET', 'socket hang up');
    const call = applyRequestFailure(addingTask(), lost, settings, {
      commandCount: 1,
      commands: [{ step: 'addTask', label: 'addTask_0' }],
    });
    expect(call.nextStep).toBe('findTask');
    const found = applyAnswers(
      { ...call, retryAt: undefined },
      [{ step: 'findTask', label: 'findTask_0' }],
      answer('findTask_0', { result: { tasks: [{ id: '21', xmlId: taskMarker('p', 'm1') }] } }),
      settings,
    );
    expect(found.missedTask?.id).toBe(21);
    expect(found.nextStep).toBeUndefined();
    // Nothing found 5 s after the add: the portal may still be creating it, so the lookup is repeated once
    // the add has settled; nothing found then means no task, and adding again is safe.
    const early = applyAnswers(
      call,
      [{ step: 'findTask', label: 'findTask_0' }],
      answer('findTask_0', { result: { tasks: [] } }),
      settings,
    );
    expect(early.nextStep).toBe('findTask');
    expect(early.dueAt).toBe(5000 + TASK_ADD_SETTLE_MS);
    const none = applyAnswers(
      early,
      [{ step: 'findTask', label: 'findTask_0' }],
      answer('findTask_0', { result: { tasks: [] } }),
      { ...settings, now: 5000 + TASK_ADD_SETTLE_MS },
    );
    expect(none.nextStep).toBe('addTask');
  });

  it('an add the portal answered with an error made no task: retried as an add, or given up leaving the call finished', () => {
    const busy = applyAnswers(
      addingTask(),
      [{ step: 'addTask', label: 'addTask_0' }],
      answer('addTask_0', { error: classifyPortalError('QUERY_LIMIT_EXCEEDED', 'Too many requests', 503) }),
      settings,
    );
    expect(busy.nextStep).toBe('addTask');
    const refused = applyAnswers(
      addingTask(),
      [{ step: 'addTask', label: 'addTask_0' }],
      answer('addTask_0', { error: classifyPortalError('insufficient_scope', 'task scope missing', 401) }),
      settings,
    );
    expect(refused.state).toBe('finished');
    expect(refused.failed).toBe(false);
    expect(refused.nextStep).toBeUndefined();
    expect(refused.missedTask?.failed).toMatch(/addTask: .*insufficient_scope/);
    expect(refused.lastError).toMatch(/insufficient_scope/);
  });

  it('a completion refused after an earlier one may have gone through counts as done', () => {
    const calledBack = plan(
      {
        ...addingTask(),
        missedTask: { deadline: '2026-11-22T11:00:40+01:00', id: 17, calledBackAt: 1, calledBackBy: 'c2' },
        stepsSent: { addTask: 1, completeTask: 2 },
      },
      0,
    );
    expect(calledBack.nextStep).toBe('completeTask');
    const done = applyAnswers(
      calledBack,
      [{ step: 'completeTask', label: 'completeTask_0' }],
      answer('completeTask_0', { error: classifyPortalError('ERROR_CORE', 'already completed', 400) }),
      settings,
    );
    expect(done.missedTask?.completed).toBe(true);
    expect(done.nextStep).toBeUndefined();
  });
});
