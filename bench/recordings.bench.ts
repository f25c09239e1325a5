/**
 * Recordings (part of `npm run bench`): the built bridge (a child process, fresh SQLite file) downloads
 * recordings from a local file server on an allowed host and uploads them to the sandbox portal (in this
 * process, 2 requests/s) through a counting proxy in front of its REST API. Prints the throughput (MB of
 * recordings per second, from the events' 202 until the portal holds every file with the right sha256), the
 * portal requests per file, and the largest request against the portal's 32 MB POST limit.
 *
 * BENCH_REC_SMALL (20) files of BENCH_REC_SMALL_MB (2) go as FILE_CONTENT, several to a request;
 * BENCH_REC_BIG (2) files of BENCH_REC_BIG_MB (28) go through the uploadUrl (raw multipart: a file over the
 * portal's 32 MB POST cannot be uploaded at all, and is left finished with the reason). BRIDGE_DIST benches another
 * build's dist/.
 */
import { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxPortal } from '../sandbox';
import { postJson, startBuiltBridge } from './bench-support';

const SMALL = Number(process.env.BENCH_REC_SMALL ?? 20);
const SMALL_MB = Number(process.env.BENCH_REC_SMALL_MB ?? 2);
const BIG = Number(process.env.BENCH_REC_BIG ?? 2);
const BIG_MB = Number(process.env.BENCH_REC_BIG_MB ?? 28);
const TOKEN = 'bench-token-recordings';
const PORTAL_POST_LIMIT = 32 * 1024 * 1024;

function wav(bytes: number, seed: number): Buffer {
  const file = Buffer.alloc(bytes);
  let x = seed >>> 0;
  for (let i = 0; i < bytes; i += 4) {
    x = (x * 1103515245 + 12345) >>> 0;
    file.writeUInt32LE(x, i - (i + 4 > bytes ? i + 4 - bytes : 0));
  }
  file.write('RIFF', 0, 'latin1');
  file.writeUInt32LE(bytes - 8, 4);
  file.write('WAVEfmt ', 8, 'latin1');
  return file;
}

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function readAll(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/**
 * `idle`: the sandbox's usual bucket (burst 50), so a request goes out as soon as a file is in: about one file
 * per request. `budget`: burst 2, so the budget binds and files wait together: the planner packs them up to
 * RECORDING_REQUEST_MAX_MB. BENCH_REC_SCENARIOS picks (default both).
 */
const SCENARIOS: Record<string, number> = { idle: 50, budget: 2 };

async function main(): Promise<void> {
  const names = (process.env.BENCH_REC_SCENARIOS ?? 'idle,budget').split(',');
  for (const name of names) {
    if (!(name in SCENARIOS)) throw new Error(`unknown scenario ${name}`);
    await scenario(name, SCENARIOS[name]);
  }
}

async function scenario(name: string, burst: number): Promise<void> {
  const files = new Map<string, Buffer>();
  for (let i = 0; i < SMALL; i += 1) files.set(`small-${i}`, wav(Math.round(SMALL_MB * 1e6), i + 1));
  for (let i = 0; i < BIG; i += 1) files.set(`big-${i}`, wav(Math.round(BIG_MB * 1e6), 1000 + i));
  const totalBytes = [...files.values()].reduce((sum, file) => sum + file.length, 0);

  const fileServer = createServer((req, res) => {
    const file = files.get((req.url ?? '').replace(/^\/rec\/|\.wav$/g, ''));
    if (!file) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': file.length }).end(file);
  });
  const filePort = await listen(fileServer);

  const sandbox = await SandboxPortal.start({ rateLimitRps: 2, rateBurst: burst });
  // The portal's REST API through a proxy that weighs every request body.
  const sizes: { bytes: number; records: number }[] = [];
  const proxy = createServer((req, res) => {
    void (async () => {
      const body = await readAll(req);
      sizes.push({
        bytes: body.length,
        records: (body.toString('latin1').match(/attachRecord/g) ?? []).length,
      });
      const answer = await fetch(`${sandbox.url}${req.url}`, {
        method: req.method,
        headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
        body: req.method === 'GET' ? undefined : (body as unknown as BodyInit),
      });
      res
        .writeHead(answer.status, { 'content-type': 'application/json' })
        .end(Buffer.from(await answer.arrayBuffer()));
    })();
  });
  const proxyPort = await listen(proxy);
  const webhook = sandbox.webhookUrl.replace(sandbox.url, `http://127.0.0.1:${proxyPort}`);

  const dir = mkdtempSync(join(tmpdir(), 'bench-rec-'));
  let child: ChildProcess | undefined;
  try {
    const bridge = await startBuiltBridge({
      NODE_ENV: 'test',
      PBX_TOKENS: TOKEN,
      B24_WEBHOOK_URL: webhook,
      PORTAL_ID: 'bench',
      DATABASE_URL: `sqlite:${join(dir, 'bridge.sqlite')}`,
      B24_DEFAULT_USER_ID: '1',
      LOG_LEVEL: 'error',
      RECORDING_FETCH_HOSTS: `127.0.0.1:${filePort}`,
      DELIVERY_MAX_BACKOFF_SEC: '2',
    });
    child = bridge.child;
    const startedAt = Date.now();
    const events = [...files.keys()].flatMap((id) => [
      {
        event: 'call.ended',
        callId: id,
        direction: 'inbound',
        phoneNumber: '+4930123456',
        extension: '101',
        startedAt: '2026-11-24T09:00:00+01:00',
        at: '2026-11-24T09:01:00+01:00',
        durationSec: 60,
        status: 'answered',
        recordingUrl: `http://127.0.0.1:${filePort}/rec/${id}.wav`,
      },
    ]);
    const status = await postJson(`${bridge.url}/v1/calls/events`, events, TOKEN);
    if (status !== 202) throw new Error(`events answered ${status}`);
    const deadline = Date.now() + 180_000;
    let arrived = 0;
    for (;;) {
      const calls = sandbox.calls();
      arrived = calls.filter((call) => {
        const record = call.records.at(-1);
        const file = files.get(call.EXTERNAL_CALL_ID ?? '');
        return record && file && record.sha256 === sha(file);
      }).length;
      if (arrived === files.size || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const seconds = (Date.now() - startedAt) / 1000;
    const records = sandbox.calls().flatMap((call) => call.records);
    const uploads = records.filter((record) => record.via === 'upload').length;
    const carrying = sizes.filter((size) => size.records > 0);
    const largest = Math.max(...sizes.map((size) => size.bytes));
    const requests = carrying.length + uploads;
    console.log(
      `recordings, ${name} (bucket 2/s, burst ${burst}): ${arrived}/${files.size} files (${SMALL} × ${SMALL_MB} MB as FILE_CONTENT, ${BIG} × ${BIG_MB} MB via uploadUrl), ` +
        `${(totalBytes / 1e6).toFixed(1)} MB in ${seconds.toFixed(1)} s = ${(totalBytes / 1e6 / seconds).toFixed(1)} MB/s`,
    );
    console.log(
      `  portal requests carrying recordings: ${carrying.length} batch + ${uploads} uploadUrl POSTs = ` +
        `${(requests / files.size).toFixed(2)} requests per file; files per content batch: ` +
        `${(records.filter((record) => record.via === 'content').length / Math.max(1, carrying.length - uploads)).toFixed(1)}`,
    );
    console.log(
      `  largest portal request: ${(largest / 1e6).toFixed(2)} MB of the 32 MB POST limit (${((100 * largest) / PORTAL_POST_LIMIT).toFixed(0)} %); ` +
        `uploadUrl POSTs carry one file each (${BIG_MB} MB)`,
    );
    if (arrived !== files.size) process.exitCode = 1;
  } finally {
    child?.kill('SIGKILL');
    proxy.closeAllConnections();
    proxy.close();
    fileServer.closeAllConnections();
    fileServer.close();
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
