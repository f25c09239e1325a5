/**
 * Recording memory (issue 26 finding 9; part of `npm run bench`): the built bridge as a child process
 * (SQLite, or PostgreSQL with BENCH_DATABASE_URL) is pushed one recording of BENCH_REC_MEM_MB (default 32,
 * the largest RECORDING_MAX_MB allows) by `PUT /v1/calls/:callId/recording`, then uploads it to the sandbox
 * portal (in this process). Prints the child's peak RSS (VmHWM, /proc) after the push and after the upload.
 * BRIDGE_DIST benches another build's dist/ (an older one: set BENCH_REC_MEM_MAX to its RECORDING_MAX_MB).
 *
 *   node -r ts-node/register/transpile-only bench/recording-memory.bench.ts
 *   BENCH_DATABASE_URL='postgres://postgres@127.0.0.1:5432/db?options=-c%20search_path%3Dbench_mem' …
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxPortal } from '../sandbox';
import { ended, postJson, started, startBuiltBridge, peakRssMb, putRecording } from './bench-support';

const MB = Number(process.env.BENCH_REC_MEM_MB ?? 32);
const TOKEN = 'bench-token-recording-memory';

async function main(): Promise<void> {
  const sandbox = await SandboxPortal.start();
  const dir = mkdtempSync(join(tmpdir(), 'bench-rec-mem-'));
  const { url, child } = await startBuiltBridge({
    PBX_TOKENS: TOKEN,
    B24_WEBHOOK_URL: sandbox.webhookUrl,
    DATABASE_URL: process.env.BENCH_DATABASE_URL ?? `sqlite:${join(dir, 'bridge.sqlite')}`,
    DEFAULT_COUNTRY: 'DE',
    B24_DEFAULT_USER_ID: '1',
    RECORDING_MAX_MB: process.env.BENCH_REC_MEM_MAX ?? String(Math.max(MB, 1)),
    LOG_LEVEL: 'error',
  });
  try {
    const file = Buffer.alloc(MB * 1_000_000, 7);
    file.write('RIFF', 0, 'latin1');
    file.write('WAVEfmt ', 8, 'latin1');
    const callId = `mem-${Date.now()}`;
    await postJson(`${url}/v1/calls/events`, [started(callId, 1)], TOKEN);
    const startRss = peakRssMb(child.pid!);
    const status = await putRecording(`${url}/v1/calls/${callId}/recording`, file, TOKEN);
    const afterPush = peakRssMb(child.pid!);
    await postJson(`${url}/v1/calls/events`, [ended(callId)], TOKEN);
    const deadline = Date.now() + 300_000;
    let via = 'none';
    while (Date.now() < deadline && child.exitCode === null) {
      const records = sandbox.calls({ EXTERNAL_CALL_ID: callId })[0]?.records ?? [];
      if (records.length > 0) {
        via = String((records[0] as { via?: string }).via);
        break;
      }
      await new Promise((done) => setTimeout(done, 200));
    }
    const exited = child.exitCode !== null;
    const afterUpload = exited ? NaN : peakRssMb(child.pid!);
    console.log(
      `recording memory: ${MB} MB push → HTTP ${status}; peak RSS ${startRss.toFixed(0)} MB at start, ` +
        `${afterPush.toFixed(0)} MB after the push, ${afterUpload.toFixed(0)} MB after the upload (via ${via})` +
        `${exited ? ' — the bridge EXITED' : ''}; store ${process.env.BENCH_DATABASE_URL ? 'PostgreSQL' : 'SQLite'}`,
    );
  } finally {
    child.kill('SIGKILL');
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main().catch((error: Error) => {
  console.error(error);
  process.exit(1);
});
