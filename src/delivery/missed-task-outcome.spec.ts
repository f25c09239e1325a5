import { CallPatch, CallRecord, patchCall } from '../calls/call';
import { newCall, plan } from '../calls/call-lifecycle';
import { countTaskAdd, TASK_ADD_SETTLE_MS, taskMarker } from '../calls/missed-call-task';
import { classifyPortalError, PortalError } from '../portal/portal-error';
import { applyAnswers, applyRequestFailure } from './delivery-outcome';

const settings = { now: 10_000, maxBackoffMs: 2000, maxAttempts: 3 };

/** A missed call finished on the portal whose task add is being sent. */
function addingTask(extra: CallPatch = {}): CallRecord {
  const base = patchCall(newCall('p', 'm1', 0), {
    party: {
      direction: 'inbound',
      phoneNumber: '+4930555',
      startedAt: '2026-11-22T10:00:00+01:00',
      ended: { at: '2026-11-22T10:00:40+01:00', durationSec: 0, status: 'missed' },
    },
    portal: { user: { USER_ID: 2 }, callId: 'externalCall.1', finished: true },
    task: { deadline: '2026-11-22T11:00:40+01:00', responsibleId: 3 },
  });
  const call = plan(patchCall(base, extra), 0);
  return countTaskAdd(patchCall(call, { delivery: { stepsSent: { addTask: 1 } } }), 5000);
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
    expect(call.task?.id).toBe(17);
    expect(call.delivery.state).toBe('finished');
    expect(call.delivery.nextStep).toBeUndefined();
  });

  it('after a request whose answer never came, looks for the task instead of adding again', () => {
    const lost = new PortalError('network', 'ECONNRESET', 'socket hang up');
    const call = applyRequestFailure(addingTask(), lost, settings, {
      commandCount: 1,
      commands: [{ step: 'addTask', label: 'addTask_0' }],
    });
    expect(call.delivery.nextStep).toBe('findTask');
    const found = applyAnswers(
      { ...call, delivery: { ...call.delivery, retryAt: undefined } },
      [{ step: 'findTask', label: 'findTask_0' }],
      answer('findTask_0', { result: { tasks: [{ id: '21', xmlId: taskMarker('p', 'm1') }] } }),
      settings,
    );
    expect(found.task?.id).toBe(21);
    expect(found.delivery.nextStep).toBeUndefined();
    // Nothing found 5 s after the add: the portal may still be creating it, so the lookup is repeated once
    // the add has settled; nothing found then means no task, and adding again is safe.
    const early = applyAnswers(
      call,
      [{ step: 'findTask', label: 'findTask_0' }],
      answer('findTask_0', { result: { tasks: [] } }),
      settings,
    );
    expect(early.delivery.nextStep).toBe('findTask');
    expect(early.delivery.dueAt).toBe(5000 + TASK_ADD_SETTLE_MS);
    const none = applyAnswers(
      early,
      [{ step: 'findTask', label: 'findTask_0' }],
      answer('findTask_0', { result: { tasks: [] } }),
      { ...settings, now: 5000 + TASK_ADD_SETTLE_MS },
    );
    expect(none.delivery.nextStep).toBe('addTask');
  });

  it('an add the portal answered with an error made no task: retried as an add, or given up leaving the call finished', () => {
    const busy = applyAnswers(
      addingTask(),
      [{ step: 'addTask', label: 'addTask_0' }],
      answer('addTask_0', { error: classifyPortalError('QUERY_LIMIT_EXCEEDED', 'Too many requests', 503) }),
      settings,
    );
    expect(busy.delivery.nextStep).toBe('addTask');
    const refused = applyAnswers(
      addingTask(),
      [{ step: 'addTask', label: 'addTask_0' }],
      answer('addTask_0', { error: classifyPortalError('insufficient_scope', 'task scope missing', 401) }),
      settings,
    );
    expect(refused.delivery.state).toBe('finished');
    expect(refused.delivery.failed).toBe(false);
    expect(refused.delivery.nextStep).toBeUndefined();
    expect(refused.task?.failed).toMatch(/addTask: .*insufficient_scope/);
    expect(refused.delivery.lastError).toMatch(/insufficient_scope/);
  });

  it('a completion refused after an earlier one may have gone through counts as done', () => {
    const calledBack = plan(
      patchCall(
        // The task replaced whole, as the portal's add and the callback left it.
        {
          ...addingTask(),
          task: { deadline: '2026-11-22T11:00:40+01:00', id: 17, calledBackAt: 1, calledBackBy: 'c2' },
        },
        { delivery: { stepsSent: { addTask: 1, completeTask: 2 } } },
      ),
      0,
    );
    expect(calledBack.delivery.nextStep).toBe('completeTask');
    const done = applyAnswers(
      calledBack,
      [{ step: 'completeTask', label: 'completeTask_0' }],
      answer('completeTask_0', { error: classifyPortalError('ERROR_CORE', 'already completed', 400) }),
      settings,
    );
    expect(done.task?.completed).toBe(true);
    expect(done.delivery.nextStep).toBeUndefined();
  });
});
