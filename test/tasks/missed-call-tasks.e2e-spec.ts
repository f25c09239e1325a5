import { eventually, Harness, startHarness } from '../support/bridge-harness';
import { clearFaults, injectFault } from '../support/sandbox-inspect';
import { callStatus, inboundCall, postEvents, statusWhen, tasksOfCall } from './task-support';

/**
 * docs/API.md through the real interface: PBX events over HTTP, the real store, the sandbox portal over
 * HTTP. Each test uses its own phone numbers, since a callback from a number completes that number's tasks.
 */
describe('missed-call tasks (MISSED_CALL_TASK=1)', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({ MISSED_CALL_TASK: '1' });
  });
  afterAll(async () => {
    await h.close();
  });
  afterEach(async () => {
    await clearFaults(h.sandbox);
  });

  const taskCreated = (status: { missedTask?: { state: string } }) => status.missedTask?.state === 'created';

  it("gives a missed call one task for the client's responsible employee, bound to the client", async () => {
    // Erika Musterfrau (contact 2, responsible: user 3) rings extension 101 (user 2); nobody answers.
    await postEvents(h.url, inboundCall('miss-1', '+49 30 555-0142', 'missed'));
    const status = await statusWhen(h.url, 'miss-1', taskCreated);
    const tasks = await tasksOfCall(h.sandbox, 'miss-1');
    expect(tasks).toHaveLength(1);
    const [task] = tasks;
    expect(status.missedTask).toEqual({
      id: Number(task.id),
      state: 'created',
      deadline: '2026-11-22T11:00:40+01:00',
      calledBackBy: null,
    });
    expect(status.state).toBe('finished');
    expect(task.title).toBe('Missed call from +49305550142 (Erika Musterfrau)');
    expect(task.description).toContain('2026-11-22T10:00:00+01:00');
    expect(task.description).toContain('Line/extension: 101');
    expect(task.responsibleId).toBe('3');
    expect(Date.parse(task.deadline)).toBe(Date.parse('2026-11-22T10:00:40+01:00') + 60 * 60_000);
    expect(task.ufCrmTask).toEqual(['C_2']);
    expect(task.status).toBe('2');
  });

  it('gives busy and cancelled inbound calls a task too; a new number is bound to the lead its register created', async () => {
    await postEvents(h.url, [
      ...inboundCall('busy-1', '+49 30 2222 0001', 'busy'),
      ...inboundCall('cancel-1', '+49 30 2222 0002', 'cancelled'),
    ]);
    for (const callId of ['busy-1', 'cancel-1']) {
      const status = await statusWhen(h.url, callId, taskCreated);
      const tasks = await tasksOfCall(h.sandbox, callId);
      expect(tasks).toHaveLength(1);
      expect(tasks[0].ufCrmTask).toEqual([`L_${status.crm.createdLead}`]);
      // The lead the register created belongs to the call's employee (user 2, extension 101).
      expect(tasks[0].responsibleId).toBe('2');
    }
  });

  it('gives answered, declined and outbound calls no task', async () => {
    await postEvents(h.url, [
      ...inboundCall('answered-1', '+49 30 3333 0001', 'answered'),
      ...inboundCall('declined-1', '+49 30 3333 0002', 'declined'),
      {
        event: 'call.started',
        callId: 'out-1',
        direction: 'outbound',
        phoneNumber: '+49 30 3333 0003',
        extension: '101',
        at: '2026-11-22T10:00:00+01:00',
      },
      {
        event: 'call.ended',
        callId: 'out-1',
        at: '2026-11-22T10:00:30+01:00',
        durationSec: 0,
        status: 'missed',
      },
    ]);
    for (const callId of ['answered-1', 'declined-1', 'out-1']) {
      const status = await statusWhen(h.url, callId, (s) => s.state === 'finished' && s.nextStep === null);
      expect(status.missedTask).toBeUndefined();
      expect(await tasksOfCall(h.sandbox, callId)).toEqual([]);
    }
  });

  it('makes exactly one task when the answer to its add is lost: it looks before it adds again', async () => {
    await injectFault(h.sandbox, { kind: 'lose-answer', method: 'tasks.task.add', times: 1 });
    await postEvents(h.url, inboundCall('lost-1', '+49 30 4444 0001', 'missed'));
    const status = await statusWhen(h.url, 'lost-1', taskCreated);
    const tasks = await tasksOfCall(h.sandbox, 'lost-1');
    expect(tasks).toHaveLength(1);
    expect(status.missedTask.id).toBe(Number(tasks[0].id));
    expect(status.lastError).toBeNull();
    // The add went once, its answer never came; the lookup found the task it made.
    const lost = h.sandbox.requests().filter((entry) => entry.error === 'ANSWER_LOST');
    expect(lost).toHaveLength(1);
  });

  it('makes exactly one task when the portal is still creating it after the add was cut off', async () => {
    // The add's caller is cut off at once; the portal creates the task 4 s later, after the first lookup.
    await injectFault(h.sandbox, {
      kind: 'lose-answer',
      method: 'tasks.task.add',
      times: 1,
      processAfterMs: 4000,
    });
    await postEvents(h.url, inboundCall('late-1', '+49 30 4444 0002', 'missed'));
    const status = await statusWhen(h.url, 'late-1', taskCreated, 120_000);
    // Past the portal's late creation: whatever the bridge did, the portal holds one task for the call.
    await eventually(async () =>
      h.sandbox.requests().some((entry) => entry.error === 'ANSWER_LOST') ? true : undefined,
    );
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const tasks = await tasksOfCall(h.sandbox, 'late-1');
    expect(tasks).toHaveLength(1);
    expect(status.missedTask.id).toBe(Number(tasks[0].id));
  }, 150_000);

  it('completes the task once when the number calls again and is answered before the deadline', async () => {
    await postEvents(h.url, inboundCall('cb-miss', '+49 30 5555 0001', 'missed'));
    await statusWhen(h.url, 'cb-miss', taskCreated);
    // Twenty minutes later the client rings again and an employee picks up.
    await postEvents(h.url, [
      {
        event: 'call.started',
        callId: 'cb-answer',
        direction: 'inbound',
        phoneNumber: '+49 30 5555 0001',
        extension: '102',
        at: '2026-11-22T10:20:00+01:00',
      },
      { event: 'call.answered', callId: 'cb-answer', extension: '102', at: '2026-11-22T10:20:05+01:00' },
    ]);
    const status = await statusWhen(h.url, 'cb-miss', (s) => s.missedTask?.state === 'completed');
    expect(status.missedTask.calledBackBy).toBe('cb-answer');
    const [task] = await tasksOfCall(h.sandbox, 'cb-miss');
    expect(task.status).toBe('5');
    const completes = await callStatus(h.url, 'cb-miss');
    expect(completes.nextStep).toBeNull();
  });

  it('completes it once also when the answer to the completion is lost', async () => {
    await postEvents(h.url, inboundCall('lost-complete', '+49 30 5555 0003', 'missed'));
    await statusWhen(h.url, 'lost-complete', taskCreated);
    await injectFault(h.sandbox, { kind: 'lose-answer', method: 'tasks.task.complete', times: 1 });
    await postEvents(h.url, [
      {
        event: 'call.ended',
        callId: 'lost-complete-cb',
        direction: 'inbound',
        phoneNumber: '+49 30 5555 0003',
        extension: '101',
        startedAt: '2026-11-22T10:05:00+01:00',
        at: '2026-11-22T10:06:00+01:00',
        durationSec: 50,
        status: 'answered',
      },
    ]);
    // The repeat is refused (already completed): after a send whose answer was lost, that means done.
    const status = await statusWhen(h.url, 'lost-complete', (s) => s.missedTask?.state === 'completed');
    expect(status.lastError).toBeNull();
    const [task] = await tasksOfCall(h.sandbox, 'lost-complete');
    expect(task.status).toBe('5');
  });

  it('is completed by an outbound callback (a CDR), also one that came before the task existed', async () => {
    await postEvents(h.url, [
      ...inboundCall('early-miss', '+49 30 5555 0002', 'missed'),
      {
        event: 'call.ended',
        callId: 'early-callback',
        direction: 'outbound',
        phoneNumber: '+49 30 5555 0002',
        extension: '103',
        startedAt: '2026-11-22T10:10:00+01:00',
        at: '2026-11-22T10:11:00+01:00',
        durationSec: 30,
        status: 'answered',
      },
    ]);
    const status = await statusWhen(h.url, 'early-miss', (s) => s.missedTask?.state === 'completed');
    expect(status.missedTask.calledBackBy).toBe('early-callback');
    const tasks = await tasksOfCall(h.sandbox, 'early-miss');
    expect(tasks).toHaveLength(1);
    expect(tasks[0].status).toBe('5');
  });

  it('leaves the task open when the callback is answered after the deadline, or not answered', async () => {
    await postEvents(h.url, inboundCall('late-miss', '+49 30 6666 0001', 'missed'));
    await statusWhen(h.url, 'late-miss', taskCreated);
    await postEvents(h.url, [
      // Not answered: no callback.
      ...inboundCall('late-again', '+49 30 6666 0001', 'missed', {
        at: '2026-11-22T10:30:00+01:00',
        endAt: '2026-11-22T10:30:30+01:00',
      }),
      // Answered, but two hours later (a CDR: answered at its end minus the talk time).
      ...inboundCall('late-answer', '+49 30 6666 0001', 'answered', {
        at: '2026-11-22T12:00:00+01:00',
        endAt: '2026-11-22T12:01:00+01:00',
      }),
    ]);
    await statusWhen(h.url, 'late-answer', (s) => s.state === 'finished' && s.nextStep === null);
    await statusWhen(h.url, 'late-again', taskCreated);
    const status = await callStatus(h.url, 'late-miss');
    expect(status.missedTask).toMatchObject({ state: 'created', calledBackBy: null });
    expect((await tasksOfCall(h.sandbox, 'late-miss'))[0].status).toBe('2');
    // The second missed call got its own task; the answer came after its deadline (10:30:30 + 60 min) too.
    expect((await tasksOfCall(h.sandbox, 'late-again'))[0].status).toBe('2');
  });
});

describe('missed-call tasks off (the default)', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  it('gives a missed call no task', async () => {
    await postEvents(h.url, inboundCall('off-1', '+49 30 555-0142', 'missed'));
    const status = await statusWhen(h.url, 'off-1', (s) => s.state === 'finished' && s.nextStep === null);
    expect(status.missedTask).toBeUndefined();
    expect(await tasksOfCall(h.sandbox, 'off-1')).toEqual([]);
  });
});
