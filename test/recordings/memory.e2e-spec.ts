import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxPortal } from '../../sandbox';
import { AppConfig } from '../../src/config/app-config';
import { ended, eventually, PBX_TOKEN, started, testEnv } from '../support/bridge-harness';
import { startBridgeProcess } from '../support/bridge-process';
import { sha256, wavFile } from './recording-server';

/** The most the bridge process may reach: it starts at about 120 MB; a 512 MiB pod must never be near. */
const PEAK_RSS_LIMIT_MB = 300;

function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

function put(url: string, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, {
      method: 'PUT',
      headers: {
        authorization: `Bearer ${PBX_TOKEN}`,
        'content-type': 'audio/wav',
        'content-length': String(body.length),
      },
    });
    request.once('response', (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.once('error', reject);
    request.end(body);
  });
}

/**
 * Issue 26 finding 9: one recording of the default largest size (RECORDING_MAX_MB) is pushed to the built
 * bridge (a child process on the real store) and uploaded to the sandbox portal; the process's peak RSS
 * (VmHWM) stays far below a 512 MiB pod's limit.
 */
describe('recordings: memory of the largest recording', () => {
  let sandbox: SandboxPortal;
  let dir: string;

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    dir = mkdtempSync(join(tmpdir(), 'bridge-rec-memory-'));
  });
  afterAll(async () => {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('takes and uploads a default-size recording without passing the bound', async () => {
    const bytes = new AppConfig().RECORDING_MAX_MB * 1_000_000;
    const bridge = await startBridgeProcess(testEnv(sandbox, dir, { DELIVERY_MAX_BACKOFF_SEC: '1' }));
    try {
      const callId = `memory-${Date.now()}`;
      const file = wavFile(bytes, 12);
      const events = await fetch(`${bridge.url}/v1/calls/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${PBX_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify([started(callId)]),
      });
      expect(events.status).toBe(202);
      expect(await put(`${bridge.url}/v1/calls/${callId}/recording`, file)).toBe(202);
      const afterPush = peakRssMb(bridge.child.pid!);
      await fetch(`${bridge.url}/v1/calls/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${PBX_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify([ended(callId)]),
      });
      const records = await eventually(async () => {
        if (bridge.child.exitCode !== null) return [];
        const held = sandbox.calls({ EXTERNAL_CALL_ID: callId })[0]?.records ?? [];
        return held.length > 0 ? held : undefined;
      }, 120_000);
      expect(bridge.child.exitCode).toBeNull();
      const afterUpload = peakRssMb(bridge.child.pid!);
      expect(records).toEqual([expect.objectContaining({ sha256: sha256(file) })]);
      expect(Math.round(afterPush)).toBeLessThan(PEAK_RSS_LIMIT_MB);
      expect(Math.round(afterUpload)).toBeLessThan(PEAK_RSS_LIMIT_MB);
    } finally {
      bridge.child.kill('SIGKILL');
      await bridge.exited;
    }
  }, 180_000);
});
