/**
 * Transcripts (SPEC §12; part of `npm run bench`), the built bridge as a child process (SQLite):
 * 1. Throughput: BENCH_TR_CALLS (default 20) answered calls, each with the two-channel test recording
 *    pushed, transcribed by the OpenAI-compatible test server (pocketsphinx, test/support/transcribe-server.ts)
 *    and attached on the sandbox portal. Prints transcripts per minute and the service's seconds per file.
 * 2. Memory: BENCH_TR_MEM_CALLS (default 200) recordings of BENCH_TR_MEM_MB (default 30) MB pushed while the
 *    service takes each file and never answers (a slow service). Prints the child's peak RSS (VmHWM) before,
 *    after the pushes and once the transcriber holds its TRANSCRIBE_CONCURRENCY files.
 *
 *   node -r ts-node/register/transpile-only bench/transcripts.bench.ts
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxPortal } from '../sandbox';
import { speechFixtures } from '../test/support/speech-audio';
import { TranscribeServer } from '../test/support/transcribe-server';
import { ended, postJson, started, startBuiltBridge, peakRssMb, putRecording, rssMb } from './bench-support';

const TOKEN = 'bench-token-transcripts';
const CALLS = Number(process.env.BENCH_TR_CALLS ?? 20);
const MEM_CALLS = Number(process.env.BENCH_TR_MEM_CALLS ?? 200);
const MEM_MB = Number(process.env.BENCH_TR_MEM_MB ?? 30);
const CONCURRENCY = 2;

async function callStatus(url: string, callId: string): Promise<{ transcript?: { state: string } }> {
  const response = await fetch(`${url}/v1/calls/${encodeURIComponent(callId)}`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  return (await response.json()) as { transcript?: { state: string } };
}

function bridgeEnv(sandbox: SandboxPortal, dir: string, transcribeUrl: string): Record<string, string> {
  return {
    PBX_TOKENS: TOKEN,
    B24_WEBHOOK_URL: sandbox.webhookUrl,
    DATABASE_URL: `sqlite:${join(dir, 'bridge.sqlite')}`,
    DEFAULT_COUNTRY: 'DE',
    B24_DEFAULT_USER_ID: '1',
    TRANSCRIBE_URL: transcribeUrl,
    TRANSCRIBE_LANGUAGE: 'en',
    TRANSCRIBE_CONCURRENCY: String(CONCURRENCY),
    RECORDING_MAX_MB: String(Math.max(32, MEM_MB)),
    // 200 files of 30 MB wait at once: past the default 1000 MB a push would get 507.
    RECORDING_QUOTA_MB: '0',
    LOG_LEVEL: 'error',
  };
}

async function throughput(): Promise<Record<string, number>> {
  const fixtures = await speechFixtures();
  const server = await TranscribeServer.start({ sentences: fixtures.sentences });
  const sandbox = await SandboxPortal.start();
  const dir = mkdtempSync(join(tmpdir(), 'bench-tr-'));
  const { url, child } = await startBuiltBridge(bridgeEnv(sandbox, dir, server.endpoint));
  try {
    const file = readFileSync(fixtures.stereoWav.path);
    const ids = Array.from({ length: CALLS }, (_, n) => `tr-bench-${Date.now()}-${n}`);
    const startedAt = Date.now();
    for (const [n, callId] of ids.entries()) {
      await postJson(`${url}/v1/calls/events`, [started(callId, n), ended(callId)], TOKEN);
      if ((await putRecording(`${url}/v1/calls/${callId}/recording`, file, TOKEN)) !== 202) {
        throw new Error(`push ${n} refused`);
      }
    }
    const pending = new Set(ids);
    let attached = 0;
    const deadline = Date.now() + 600_000;
    while (pending.size > 0 && Date.now() < deadline) {
      for (const callId of [...pending]) {
        const state = (await callStatus(url, callId)).transcript?.state;
        if (state && state !== 'pending') pending.delete(callId);
        if (state === 'attached') attached += 1;
      }
      await new Promise((done) => setTimeout(done, 250));
    }
    const elapsedSec = (Date.now() - startedAt) / 1000;
    return {
      calls: CALLS,
      attached,
      notSettled: pending.size,
      elapsedSec: Number(elapsedSec.toFixed(1)),
      transcriptsPerMinute: Number(((CALLS - pending.size) / (elapsedSec / 60)).toFixed(1)),
      recordingSec: fixtures.stereoWav.durationSec,
      filesPerCall: 2,
    };
  } finally {
    child.kill('SIGKILL');
    await sandbox.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A service that reads each file whole and never answers: the bridge's files wait at it. */
function stalledService(): Promise<{ server: Server; url: string; taken: () => number }> {
  let taken = 0;
  const held: IncomingMessage[] = [];
  const server = createServer((request) => {
    request.on('data', () => undefined);
    request.on('end', () => {
      taken += 1;
      held.push(request);
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ server, url: `http://127.0.0.1:${port}/v1/audio/transcriptions`, taken: () => taken });
    }),
  );
}

/** A two-channel 8 kHz 16-bit wav of `bytes` (its samples a quiet pattern). */
function stereoWav(bytes: number): Buffer {
  const data = bytes - 44;
  const file = Buffer.alloc(bytes);
  file.write('RIFF', 0, 'latin1');
  file.writeUInt32LE(bytes - 8, 4);
  file.write('WAVEfmt ', 8, 'latin1');
  file.writeUInt32LE(16, 16);
  file.writeUInt16LE(1, 20);
  file.writeUInt16LE(2, 22);
  file.writeUInt32LE(8000, 24);
  file.writeUInt32LE(8000 * 4, 28);
  file.writeUInt16LE(4, 32);
  file.writeUInt16LE(16, 34);
  file.write('data', 36, 'latin1');
  file.writeUInt32LE(data, 40);
  for (let i = 44; i + 1 < bytes; i += 2) file.writeInt16LE(((i >> 1) % 64) - 32, i);
  return file;
}

async function memory(): Promise<Record<string, number>> {
  const service = await stalledService();
  const sandbox = await SandboxPortal.start();
  const dir = mkdtempSync(join(tmpdir(), 'bench-tr-mem-'));
  const { url, child } = await startBuiltBridge(bridgeEnv(sandbox, dir, service.url));
  try {
    const file = stereoWav(MEM_MB * 1_000_000);
    const atStart = rssMb(child.pid!);
    for (let n = 0; n < MEM_CALLS; n++) {
      const callId = `tr-mem-${n}`;
      await postJson(`${url}/v1/calls/events`, [started(callId, n), ended(callId)], TOKEN);
      if ((await putRecording(`${url}/v1/calls/${callId}/recording`, file, TOKEN)) !== 202) {
        throw new Error(`push ${n} refused`);
      }
    }
    const afterPushes = peakRssMb(child.pid!);
    const deadline = Date.now() + 300_000;
    while (service.taken() < CONCURRENCY && Date.now() < deadline) {
      await new Promise((done) => setTimeout(done, 250));
    }
    // Let the waiting calls come due and queue behind the two at the service.
    await new Promise((done) => setTimeout(done, 5_000));
    return {
      recordings: MEM_CALLS,
      recordingMb: MEM_MB,
      heldAtServiceFiles: service.taken(),
      rssAtStartMb: Math.round(atStart),
      peakRssAfterPushesMb: Math.round(afterPushes),
      peakRssWaitingMb: Math.round(peakRssMb(child.pid!)),
      rssWaitingMb: Math.round(rssMb(child.pid!)),
    };
  } finally {
    child.kill('SIGKILL');
    service.server.closeAllConnections();
    service.server.close();
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const rate = await throughput();
  console.log(JSON.stringify({ transcriptThroughput: rate }));
  const held = await memory();
  console.log(JSON.stringify({ transcriptMemory: held }));
}

void main().catch((error: Error) => {
  console.error(error);
  process.exit(1);
});
