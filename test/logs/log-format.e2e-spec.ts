import axios from 'axios';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxPortal } from '../../sandbox';
import { ADMIN_TOKEN, eventually, PBX_TOKEN, testEnv } from '../support/bridge-harness';
import { BridgeProcess, startBridgeProcess } from '../support/bridge-process';
import { clearFaults, injectFault } from '../support/sandbox-inspect';
import { testDatabaseUrl } from '../support/test-database';

/**
 * LOG_FORMAT through the built bridge's own output (a child process; its stdout is a pipe, so unset means
 * JSON): a few start-up lines, a line per delivered and per failed call, short request lines when pretty,
 * and never a secret in either format.
 */
describe('log format (LOG_FORMAT)', () => {
  let sandbox: SandboxPortal;
  let dir: string;
  const webhookCode = 'sandbox0webhook0code';

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    dir = mkdtempSync(join(tmpdir(), 'bridge-log-format-'));
  });
  afterAll(async () => {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  });
  afterEach(() => clearFaults(sandbox));

  const call = (callId: string) => [
    {
      event: 'call.started',
      callId,
      direction: 'inbound',
      phoneNumber: '+4930222333',
      extension: '101',
      at: '2026-11-22T10:00:00+01:00',
    },
    { event: 'call.ended', callId, at: '2026-11-22T10:01:00+01:00', durationSec: 60, status: 'answered' },
  ];

  /** Posts a call that is delivered and one a proxy refuses (failed at once), and waits for their lines. */
  async function deliverAndFail(
    bridge: BridgeProcess,
    stamp: string,
    seen: (callId: string, word: string) => boolean,
  ): Promise<string[]> {
    const headers = { Authorization: `Bearer ${PBX_TOKEN}` };
    const startup = bridge.output().split('\n').filter(Boolean);
    await injectFault(sandbox, { kind: 'refuse', text: `refused-${stamp}`, status: 403 });
    await axios.post(`${bridge.url}/v1/calls/events`, call(`ok-${stamp}`), { headers });
    await axios.post(`${bridge.url}/v1/calls/events`, call(`refused-${stamp}`), { headers });
    await eventually(
      async () => (seen(`ok-${stamp}`, 'delivered') && seen(`refused-${stamp}`, 'failed') ? true : undefined),
      40000,
    );
    return startup;
  }

  function expectNoSecret(output: string): void {
    for (const secret of [PBX_TOKEN, webhookCode, ADMIN_TOKEN]) expect(output).not.toContain(secret);
  }

  it('pretty: readable lines, start-up in a few, one short line per request and per delivered or failed call', async () => {
    const env = testEnv(sandbox, dir, {
      LOG_LEVEL: 'log',
      LOG_FORMAT: 'pretty',
      DELIVERY_MAX_ATTEMPTS: '1',
      DATABASE_URL: testDatabaseUrl(dir, 'pretty.sqlite'),
    });
    const bridge = await startBridgeProcess(env);
    try {
      const stamp = `p${Date.now()}`;
      const has = (pattern: RegExp) =>
        bridge
          .output()
          .split('\n')
          .some((text) => pattern.test(text));
      const startup = await deliverAndFail(bridge, stamp, (callId, word) =>
        has(new RegExp(`call ${callId} ${word}`)),
      );
      expect(startup.length).toBeGreaterThan(0);
      expect(startup.length).toBeLessThanOrEqual(6);
      expect(startup.some((text) => text.includes(`listening on http://127.0.0.1:`))).toBe(true);
      expect(startup.join('\n')).not.toContain('Mapped');

      const lines = bridge.output().split('\n').filter(Boolean);
      expect(lines.filter((text) => text.trimStart().startsWith('{'))).toEqual([]);
      const delivered = lines.find((text) => text.includes(`call ok-${stamp} delivered`));
      expect(delivered).toMatch(/INFO.*finished on the portal as externalCall\./);
      const failed = lines.find((text) => text.includes(`call refused-${stamp} failed`));
      expect(failed).toMatch(/WARN.*register: HTTP 403/);
      const requests = lines.filter((text) => text.includes('POST /v1/calls/events 202'));
      expect(requests).toHaveLength(2);
      for (const request of requests) expect(request.length).toBeLessThan(100);
      expectNoSecret(bridge.output());
    } finally {
      bridge.child.kill('SIGKILL');
      await bridge.exited;
    }
  });

  it('json (the default without a terminal): one object per line, the call lines with their ids and state', async () => {
    const env = testEnv(sandbox, dir, {
      LOG_LEVEL: 'log',
      DELIVERY_MAX_ATTEMPTS: '1',
      DATABASE_URL: testDatabaseUrl(dir, 'json.sqlite'),
    });
    const bridge = await startBridgeProcess(env);
    try {
      const stamp = `j${Date.now()}`;
      const records = () =>
        bridge
          .output()
          .split('\n')
          .filter(Boolean)
          .map((text) => JSON.parse(text) as Record<string, unknown>);
      const startup = await deliverAndFail(bridge, stamp, (callId, word) =>
        records().some((record) => record.callId === callId && String(record.msg).includes(word)),
      );
      expect(startup.length).toBeLessThanOrEqual(6);

      const delivered = records().find((record) => record.callId === `ok-${stamp}`);
      expect(delivered).toMatchObject({ level: 30, state: 'finished', context: 'Delivery sandbox' });
      expect(delivered?.portalCallId).toMatch(/^externalCall\./);
      const failed = records().find((record) => record.callId === `refused-${stamp}`);
      expect(failed).toMatchObject({ level: 40, state: 'failed', portalCallId: null });
      expect(String(failed?.reason)).toContain('register: HTTP 403');
      expectNoSecret(bridge.output());
    } finally {
      bridge.child.kill('SIGKILL');
      await bridge.exited;
    }
  });
});
