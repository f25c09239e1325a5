import axios from 'axios';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxPortal } from '../../sandbox';
import { callBodies, eventually, PBX_TOKEN, testEnv } from '../support/bridge-harness';
import { startBridgeProcess } from '../support/bridge-process';
import { clearFaults, injectFault, sandboxCalls } from '../support/sandbox-inspect';

/**
 * What the PBX was told was stored survives `kill -9`: a real bridge process is killed right after its
 * 202s and restarted on the same SQLite file; every call then reaches the portal exactly once.
 */
describe('crash recovery (SIGKILL)', () => {
  let sandbox: SandboxPortal;
  let dir: string;

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    dir = mkdtempSync(join(tmpdir(), 'bridge-crash-'));
  });
  afterAll(async () => {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** All requests at once; returns how many events were newly stored. */
  async function postAll(url: string, bodies: unknown[][]): Promise<number> {
    const responses = await Promise.all(
      bodies.map((body) =>
        axios.post(`${url}/v1/calls/events`, body, { headers: { Authorization: `Bearer ${PBX_TOKEN}` } }),
      ),
    );
    for (const response of responses) expect(response.status).toBe(202);
    return responses.reduce((sum, response) => sum + response.data.accepted, 0);
  }

  async function expectExactlyOnce(prefix: string, count: number): Promise<void> {
    const delivered = await eventually(async () => {
      const mine = (await sandboxCalls(sandbox)).filter((call) =>
        call.EXTERNAL_CALL_ID?.startsWith(`${prefix}-`),
      );
      return mine.filter((call) => call.finished).length >= count ? mine : undefined;
    }, 60000);
    const ids = delivered.map((call) => call.EXTERNAL_CALL_ID);
    expect(new Set(ids).size).toBe(count);
    expect(ids).toHaveLength(count);
  }

  it('loses nothing acknowledged while the portal was down', async () => {
    const env = testEnv(sandbox, dir, { LOG_LEVEL: 'warn' });
    await injectFault(sandbox, { kind: 'outage' });
    const first = await startBridgeProcess(env);
    const accepted = await postAll(first.url, callBodies('down', 200));
    expect(accepted).toBe(400);
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');

    await clearFaults(sandbox);
    const second = await startBridgeProcess(env);
    try {
      await expectExactlyOnce('down', 200);
    } finally {
      second.child.kill('SIGKILL');
      await second.exited;
    }
  });

  it('killed mid-delivery, it delivers every call exactly once after the restart', async () => {
    const env = testEnv(sandbox, dir, { LOG_LEVEL: 'warn' });
    await injectFault(sandbox, { kind: 'latency', ms: 150 });
    const first = await startBridgeProcess(env);
    await postAll(first.url, callBodies('mid', 300));
    await eventually(async () =>
      (await sandboxCalls(sandbox)).some((call) => call.EXTERNAL_CALL_ID?.startsWith('mid-'))
        ? true
        : undefined,
    );
    first.child.kill('SIGKILL');
    await first.exited;
    const finishedBeforeKill = (await sandboxCalls(sandbox)).filter(
      (call) => call.EXTERNAL_CALL_ID?.startsWith('mid-') && call.finished,
    ).length;
    expect(finishedBeforeKill).toBeLessThan(300);
    await clearFaults(sandbox);

    const second = await startBridgeProcess(env);
    try {
      await expectExactlyOnce('mid', 300);
    } finally {
      second.child.kill('SIGKILL');
      await second.exited;
    }
  });
});
