import axios from 'axios';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxPortal } from '../../sandbox';
import { ended, eventually, PBX_TOKEN, started, testEnv } from '../support/bridge-harness';
import { startBridgeProcess } from '../support/bridge-process';
import { clearFaults, injectFault, sandboxCalls } from '../support/sandbox-inspect';
import { sha256, wavFile } from './recording-server';

/** A pushed recording answered 202 survives `kill -9` of the bridge before delivery, and arrives after restart. */
describe('recordings: a pushed file survives kill -9', () => {
  let sandbox: SandboxPortal;
  let dir: string;

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    dir = mkdtempSync(join(tmpdir(), 'bridge-rec-crash-'));
  });
  afterAll(async () => {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('delivers the exact bytes after the restart', async () => {
    const env = testEnv(sandbox, dir, { DELIVERY_MAX_BACKOFF_SEC: '1', RECORDING_REQUEST_MAX_MB: '1' });
    const headers = { Authorization: `Bearer ${PBX_TOKEN}` };
    const callId = `crash-rec-${Date.now()}`;
    const file = wavFile(2_000_000, 11);
    await injectFault(sandbox, { kind: 'outage' });
    const first = await startBridgeProcess(env);
    try {
      const events = await axios.post(`${first.url}/v1/calls/events`, [started(callId), ended(callId)], {
        headers,
      });
      expect(events.status).toBe(202);
      const pushed = await axios.put(`${first.url}/v1/calls/${callId}/recording`, file, {
        headers: { ...headers, 'Content-Type': 'audio/wav' },
        maxBodyLength: Infinity,
      });
      expect(pushed.status).toBe(202);
    } finally {
      first.child.kill('SIGKILL');
      await first.exited;
    }
    await clearFaults(sandbox);
    const second = await startBridgeProcess(env);
    try {
      const call = await eventually(async () => {
        const [found] = (await sandboxCalls(sandbox)).filter((c) => c.EXTERNAL_CALL_ID === callId);
        return found && found.records.length > 0 ? found : undefined;
      }, 30000);
      expect(call.records).toEqual([
        expect.objectContaining({ sha256: sha256(file), bytes: 2_000_000, via: 'upload' }),
      ]);
      // The portal has it before the bridge has stored the answer: wait for that too.
      const data = await eventually(async () => {
        const answer = await axios.get(`${second.url}/v1/calls/${callId}`, { headers });
        return answer.data.recording === 'attached' ? answer.data : undefined;
      });
      expect(data).toMatchObject({
        state: 'finished',
        recording: 'attached',
        recordingDetail: { via: 'push' },
      });
    } finally {
      second.child.kill('SIGKILL');
      await second.exited;
    }
  });
});
