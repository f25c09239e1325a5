import axios from 'axios';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ended, eventually, PBX_TOKEN, started, testEnv } from '../support/bridge-harness';
import { SandboxPortal } from '../../sandbox';
import { SourceBridge, startSourceBridge } from './delivery-support';

/**
 * Item 1: with B24_BATCH_SIZE=1 a finish and its attachRecord cannot share a request. The finish goes alone
 * and the recording follows; the bridge keeps answering HTTP meanwhile (it used to spin on the same call
 * without ever yielding, so the process froze: hence a child process).
 */
describe('B24_BATCH_SIZE=1 with recordings', () => {
  let sandbox: SandboxPortal;
  let bridge: SourceBridge;
  let dir: string;

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    dir = mkdtempSync(join(tmpdir(), 'bridge-batch-one-'));
    bridge = await startSourceBridge({
      ...testEnv(sandbox, dir, { B24_BATCH_SIZE: '1', LOG_LEVEL: 'warn' }),
    });
  }, 90000);
  afterAll(async () => {
    await bridge?.stop();
    await sandbox?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('delivers register, finish and attachRecord of every call, one command a request, and HTTP keeps answering', async () => {
    const ids = Array.from({ length: 4 }, (_, i) => `one-${Date.now()}-${i}`);
    const body = ids.flatMap((callId, i) => [
      started(callId, { phoneNumber: `+4915120000${i}` }),
      ended(callId, { recordingUrl: `https://pbx.example.com/rec/${callId}.mp3` }),
    ]);
    const posted = await axios.post(`${bridge.url}/v1/calls/events`, body, {
      headers: { Authorization: `Bearer ${PBX_TOKEN}` },
      timeout: 10000,
    });
    expect(posted.status).toBe(202);

    let probes = 0;
    const delivered = await eventually(async () => {
      // A frozen event loop answers nothing: this probe then times out and the test fails.
      const live = await axios.get(`${bridge.url}/health/live`, { timeout: 10000 });
      expect(live.status).toBe(200);
      probes += 1;
      const calls = sandbox.calls().filter((call) => ids.includes(call.EXTERNAL_CALL_ID));
      const done = calls.filter((call) => call.finished && call.records.length > 0);
      return done.length === ids.length ? calls : undefined;
    }, 45000);
    expect(probes).toBeGreaterThan(0);
    expect(delivered.map((call) => call.records.length)).toEqual(ids.map(() => 1));
    expect(delivered.map((call) => call.registerRequests)).toEqual(ids.map(() => 1));
    const batches = sandbox.requests().filter((request) => request.method === 'batch');
    expect(batches.every((request) => request.commands === 1)).toBe(true);
  });
});
