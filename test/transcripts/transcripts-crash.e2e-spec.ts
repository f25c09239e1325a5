import axios from 'axios';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxPortal } from '../../sandbox';
import { ended, eventually, PBX_TOKEN, started, testEnv } from '../support/bridge-harness';
import { BridgeProcess, startBridgeProcess } from '../support/bridge-process';
import { clearFaults, injectFault, sandboxTranscripts } from '../support/sandbox-inspect';
import { SpeechFixtures, speechFixtures } from '../support/speech-audio';
import { transcribeRequests } from '../support/transcribe-inspect';
import { TranscribeServer } from '../support/transcribe-server';

/**
 * One transcript per call across `kill -9` (SPEC §12): a real bridge process (dist/main.js, `npx nest
 * build` first) is killed while its attach waits for the portal's answer, and restarted on the same
 * SQLite file. The restarted bridge neither asks the service again (the messages were stored) nor sends a
 * second transcript (it asks the call's statistics first). Its whole output, at the most verbose level,
 * never carries TRANSCRIBE_AUTH's key.
 */
describe('transcripts across a crash (SIGKILL)', () => {
  const key = 'sk-crash-0123456789abcdef';
  let sandbox: SandboxPortal;
  let server: TranscribeServer;
  let fixtures: SpeechFixtures;
  let dir: string;
  const output: string[] = [];

  beforeAll(async () => {
    fixtures = await speechFixtures();
    sandbox = await SandboxPortal.start();
    server = await TranscribeServer.start({ sentences: fixtures.sentences, apiKey: key });
    dir = mkdtempSync(join(tmpdir(), 'bridge-transcript-crash-'));
  });
  afterAll(async () => {
    await sandbox?.close();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const headers = { Authorization: `Bearer ${PBX_TOKEN}` };
  const status = async (bridge: BridgeProcess, callId: string) =>
    (await axios.get(`${bridge.url}/v1/calls/${callId}`, { headers })).data;

  it('sends one transcript when killed while the attach waits for its answer', async () => {
    const env = testEnv(sandbox, dir, {
      TRANSCRIBE_URL: server.endpoint,
      TRANSCRIBE_AUTH: `bearer:${key}`,
      LOG_LEVEL: 'verbose',
      // The held-back answer must not time out first: the bridge is killed while it waits.
      B24_TIMEOUT_MS: '30000',
    });
    const callId = `crash-tr-${Date.now()}`;
    // The portal saves the transcript, then holds its answer back: the bridge dies before it comes.
    await injectFault(sandbox, {
      kind: 'latency',
      ms: 20_000,
      method: 'telephony.call.attachTranscription',
      times: 1,
    });
    const first = await startBridgeProcess(env);
    try {
      await axios.post(`${first.url}/v1/calls/events`, [started(callId), ended(callId)], { headers });
      await axios.put(`${first.url}/v1/calls/${callId}/recording`, readFileSync(fixtures.monoWav.path), {
        headers: { ...headers, 'Content-Type': 'audio/wav' },
      });
      // Marked as sent (its next step is the look at the statistics): the attach is at the portal.
      await eventually(async () => {
        const body = await status(first, callId);
        return body.nextStep === 'findTranscript' ? true : undefined;
      }, 60_000);
      await eventually(async () =>
        (await sandboxTranscripts(sandbox)).some((t) => t.MESSAGES.length > 0) ? true : undefined,
      );
    } finally {
      first.child.kill('SIGKILL');
      await first.exited;
      output.push(first.output());
    }
    await clearFaults(sandbox);

    const second = await startBridgeProcess(env);
    try {
      const done = await eventually(async () => {
        const body = await status(second, callId);
        return body.transcript?.state === 'attached' ? body : undefined;
      }, 60_000);
      expect(done.transcript).toEqual({ state: 'attached', messages: 2 });
      expect(await sandboxTranscripts(sandbox, done.crm.callId)).toHaveLength(1);
      // The service was asked once: the restart used the stored messages.
      const asked = (await transcribeRequests(server)).filter((r) => r.file?.name.startsWith(callId));
      expect(asked).toHaveLength(1);
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
      output.push(second.output());
    }
    expect(output.join('\n')).toContain(callId);
    expect(output.join('\n')).not.toContain(key);
  });
});
