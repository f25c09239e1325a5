import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxPortal } from '../../sandbox';
import { eventually, testEnv } from '../support/bridge-harness';
import { startBridgeProcess } from '../support/bridge-process';
import { clearFaults, injectFault } from '../support/sandbox-inspect';
import { inboundCall, postEvents, statusWhen, tasksOfCall } from './task-support';

/**
 * Exactly one task when the bridge dies between sending `tasks.task.add` and reading its answer: the
 * sandbox makes the task at once but holds the answer back; the bridge process is killed with SIGKILL
 * meanwhile and restarted on the same store. It must find the task, not add a second one.
 */
describe('missed-call task across kill -9', () => {
  let sandbox: SandboxPortal;
  let dir: string;

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    dir = mkdtempSync(join(tmpdir(), 'bridge-task-crash-'));
  });
  afterAll(async () => {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('killed while the add is unanswered, it finds the task after the restart instead of adding another', async () => {
    const env = testEnv(sandbox, dir, {
      MISSED_CALL_TASK: '1',
      // The held answer must not time out first: the kill is what cuts it off.
      B24_TIMEOUT_MS: '30000',
      DELIVERY_LEASE_SEC: '3',
      LOG_LEVEL: 'warn',
    });
    await injectFault(sandbox, { kind: 'latency', ms: 20000, method: 'tasks.task.add', times: 1 });
    const first = await startBridgeProcess(env);
    await postEvents(first.url, inboundCall('crash-1', '+49 30 7777 0001', 'missed'));
    // The portal has made the task; its answer is still on hold.
    await eventually(async () => ((await tasksOfCall(sandbox, 'crash-1')).length > 0 ? true : undefined));
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    await clearFaults(sandbox);

    const second = await startBridgeProcess(env);
    try {
      const status = await statusWhen(second.url, 'crash-1', (s) => s.missedTask?.state === 'created', 30000);
      const tasks = await tasksOfCall(sandbox, 'crash-1');
      expect(tasks).toHaveLength(1);
      expect(status.missedTask.id).toBe(Number(tasks[0].id));
    } finally {
      second.child.kill('SIGKILL');
      await second.exited;
    }
  });
});
