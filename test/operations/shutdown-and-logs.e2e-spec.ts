import axios from 'axios';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxPortal } from '../../sandbox';
import { ADMIN_TOKEN, eventually, PBX_TOKEN, testEnv } from '../support/bridge-harness';
import { startBridgeProcess } from '../support/bridge-process';
import { testDatabaseUrl } from '../support/test-database';
import { callsByExternalId, clearFaults, injectFault } from '../support/sandbox-inspect';

/** The built bridge as a real child process: SIGTERM drains gracefully, and its logs keep secrets out. */
describe('graceful shutdown and logs', () => {
  let sandbox: SandboxPortal;
  let dir: string;
  const webhookCode = 'sandbox0webhook0code';

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    dir = mkdtempSync(join(tmpdir(), 'bridge-shutdown-'));
  });
  afterAll(async () => {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const event = (callId: string) => ({
    event: 'call.started',
    callId,
    direction: 'inbound',
    phoneNumber: '+4930222333',
    extension: '101',
    at: '2026-11-22T10:00:00+01:00',
  });

  it('on SIGTERM: readiness goes false first, requests in flight finish, nothing acknowledged is lost', async () => {
    const env = testEnv(sandbox, dir, {
      SHUTDOWN_DELAY_MS: '1500',
      LOG_LEVEL: 'warn',
      PBX_RATE_LIMIT_RPS: '10000',
    });
    await injectFault(sandbox, { kind: 'latency', ms: 300 });
    const bridge = await startBridgeProcess(env);
    const agent = new Agent({ keepAlive: true, maxSockets: 4 });
    const client = axios.create({ httpAgent: agent, validateStatus: () => true });
    const acknowledged: string[] = [];
    let stop = false;
    const senders = Array.from({ length: 4 }, async (_, worker) => {
      for (let n = 0; !stop; n++) {
        const callId = `term-${worker}-${n}`;
        try {
          const response = await client.post(`${bridge.url}/v1/calls/events`, event(callId), {
            headers: { Authorization: `Bearer ${PBX_TOKEN}` },
          });
          if (response.status === 202) acknowledged.push(callId);
          // Load shaping, not a wait: four senders, a short gap between posts.
          await new Promise((resolve) => setTimeout(resolve, 5));
        } catch {
          return; // the server closed: this request was never acknowledged
        }
      }
    });
    await eventually(async () => (acknowledged.length >= 20 ? true : undefined));
    bridge.child.kill('SIGTERM');
    const notReady = await eventually(async () => {
      const response = await client.get(`${bridge.url}/health/ready`).catch(() => undefined);
      return response?.status === 503 ? response : undefined;
    });
    expect(notReady.data.error.lifecycle.status).toBe('down');
    const exit = await bridge.exited;
    stop = true;
    await Promise.all(senders);
    agent.destroy();
    expect(exit.code === 0 || exit.signal === 'SIGTERM').toBe(true);
    const errors = bridge
      .output()
      .split('\n')
      .filter((line) => /"level":(50|60)/.test(line) && !line.includes('Health Check has failed'));
    expect(errors).toEqual([]);

    await clearFaults(sandbox);
    const restarted = await startBridgeProcess(env);
    try {
      for (const callId of acknowledged) {
        const response = await axios.get(`${restarted.url}/v1/calls/${callId}`, {
          headers: { Authorization: `Bearer ${PBX_TOKEN}` },
        });
        expect(response.status).toBe(200);
      }
      const last = acknowledged[acknowledged.length - 1];
      await eventually(async () =>
        (await callsByExternalId(sandbox, last)).length === 1 ? true : undefined,
      );
    } finally {
      restarted.child.kill('SIGKILL');
      await restarted.exited;
    }
  });

  it('writes JSON logs with request ids and never a PBX token, admin token, webhook code or OAuth code', async () => {
    const env = testEnv(sandbox, dir, {
      LOG_LEVEL: 'verbose',
      DATABASE_URL: testDatabaseUrl(dir, 'logs.sqlite'),
    });
    const bridge = await startBridgeProcess(env);
    try {
      const headers = { Authorization: `Bearer ${PBX_TOKEN}` };
      await axios.post(`${bridge.url}/v1/calls/events`, event('log-1'), { headers });
      await axios.post(`${bridge.url}/v1/calls/events`, event('log-2'), {
        auth: { username: 'pbx', password: PBX_TOKEN },
      });
      await axios.post(`${bridge.url}/v1/calls/events`, event('log-3'), {
        headers: { Authorization: 'Bearer wrong-token-value-xyz' },
        validateStatus: () => true,
      });
      await axios.get(`${bridge.url}/v1/admin/calls`, {
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      await axios.get(`${bridge.url}/oauth/callback?code=oauth-code-secret-77&state=state-secret-88`, {
        validateStatus: () => true,
      });
      await eventually(async () =>
        (await callsByExternalId(sandbox, 'log-2')).length === 1 ? true : undefined,
      );
      const output = bridge.output();
      const lines = output.split('\n').filter(Boolean);
      const json = lines.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line));
      expect(json.length).toBeGreaterThan(3);
      expect(json.some((entry) => entry.req?.id && entry.req?.url === '/v1/calls/events')).toBe(true);
      for (const secret of [
        PBX_TOKEN,
        Buffer.from(`pbx:${PBX_TOKEN}`).toString('base64'),
        ADMIN_TOKEN,
        'wrong-token-value-xyz',
        webhookCode,
        'oauth-code-secret-77',
        'state-secret-88',
      ]) {
        expect(output).not.toContain(secret);
      }
    } finally {
      bridge.child.kill('SIGKILL');
      await bridge.exited;
    }
  });
});
