/**
 * The first burst (part of `npm run bench`): one backlog of calls delivered to a fresh sandbox portal with a
 * bucket of 10, then of 50 (2 requests/s), by a batching script and by the built bridge. Prints one JSON
 * document.
 *
 * The script is written here the way the portal vendor's JS SDK drives a portal from a script: every
 * register in batches of 50, one batch after the other, then the finishes, then the recordings, with the
 * SDK's default client-side bucket (50, draining 2/s) and its answer to a 503 (its bucket emptied, the
 * batch sent again after 1.5 s × 1.5^attempt, three attempts). The SDK itself is not driven: it sends
 * webhook requests to https:// only (it rewrites the portal's address), and the sandbox answers plain
 * HTTP on 127.0.0.1.
 *
 * The bridge runs as a child process on a fresh SQLite file, told the portal's burst, in two ways:
 *  - waiting: the backlog was taken in by an earlier run of the bridge that could not deliver it (its
 *    budget spent on another portal), so it is in the store when this one starts;
 *  - arriving: the calls are posted at once after the bridge answers /health/live.
 *
 * For each: the ratio of the ceiling bench, commands of the calls executed ÷ 50 × (burst + rate × seconds
 * from the client's first request's arrival to its last call request's), the 503s, and the requests spent
 * on anything but the calls before the last call request.
 * BENCH_BURST_CALLS (1500) sizes the backlog, BENCH_BURSTS (10,50) picks the bursts, BENCH_BURST_CLIENTS
 * (script,bridgeWaiting,bridgeArriving) the clients; BRIDGE_DIST benches another build's dist/.
 */
import axios from 'axios';
import { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'qs';
import { RequestLogEntry, SandboxPortal } from '../sandbox';
import { DIST, postJson, startBuiltBridge } from './bench-support';

const CALLS = Number(process.env.BENCH_BURST_CALLS ?? 1500);
const BURSTS = (process.env.BENCH_BURSTS ?? '10,50').split(',').map(Number);
const RATE = 2;
const BATCH = 50;
const TOKEN = 'bench-token-burst';
const EXTENSION = '101';

interface BacklogCall {
  n: number;
  phone: string;
  inbound: boolean;
  recordingUrl?: string;
}

const BACKLOG: BacklogCall[] = Array.from({ length: CALLS }, (_, n) => ({
  n,
  phone: `+4930${String(3000000 + n)}`,
  inbound: n % 2 === 1,
  ...(n % 10 === 0 ? { recordingUrl: `https://pbx.example.com/rec/${n}.mp3` } : {}),
}));

/** Registers, finishes and attachRecords: the commands the backlog takes, whoever delivers it. */
const EXPECTED_COMMANDS = CALLS * 2 + BACKLOG.filter((call) => call.recordingUrl).length;

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

function pbxEvents(): unknown[] {
  return BACKLOG.flatMap((call) => [
    {
      event: 'call.started',
      callId: `burst-${call.n}`,
      direction: call.inbound ? 'inbound' : 'outbound',
      phoneNumber: call.phone,
      extension: EXTENSION,
      at: '2026-11-24T10:00:00+01:00',
    },
    {
      event: 'call.ended',
      callId: `burst-${call.n}`,
      at: '2026-11-24T10:01:00+01:00',
      durationSec: 60,
      status: 'answered',
      ...(call.recordingUrl ? { recordingUrl: call.recordingUrl } : {}),
    },
  ]);
}

/** The SDK's default client-side bucket: 50 requests, refilled at 2 a second. */
class ScriptBucket {
  private tokens = 50;
  private at = Date.now();

  async take(): Promise<void> {
    for (;;) {
      this.refill();
      if (this.tokens >= 1) {
        this.tokens -= 1;
        return;
      }
      await sleep(Math.ceil(((1 - this.tokens) / RATE) * 1000));
    }
  }

  emptied(): void {
    this.refill();
    this.tokens = 0;
  }

  private refill(): void {
    const now = Date.now();
    this.tokens = Math.min(50, this.tokens + ((now - this.at) / 1000) * RATE);
    this.at = now;
  }
}

type Command = [method: string, params: Record<string, unknown>];

/** One batch as the SDK sends it, retried after a 503 as the SDK does; the commands' results by index. */
async function scriptBatch(
  webhookUrl: string,
  bucket: ScriptBucket,
  commands: Command[],
): Promise<unknown[]> {
  const cmd = Object.fromEntries(
    commands.map(([method, params], index) => [`c${index}`, `${method}?${stringify(params)}`]),
  );
  for (let attempt = 0; ; attempt++) {
    await bucket.take();
    const answer = await axios.post(
      `${webhookUrl}batch.json`,
      { halt: 0, cmd },
      { validateStatus: () => true },
    );
    if (answer.status === 200) {
      const results = (answer.data as { result: { result: Record<string, unknown> } }).result.result;
      return commands.map((_, index) => results[`c${index}`]);
    }
    if (answer.status !== 503 || attempt === 2) throw new Error(`the portal answered ${answer.status}`);
    bucket.emptied();
    await sleep(1500 * 1.5 ** attempt);
  }
}

async function scriptBatches(
  webhookUrl: string,
  bucket: ScriptBucket,
  commands: Command[],
): Promise<unknown[]> {
  const results: unknown[] = [];
  for (let start = 0; start < commands.length; start += BATCH) {
    results.push(...(await scriptBatch(webhookUrl, bucket, commands.slice(start, start + BATCH))));
  }
  return results;
}

/** The batching script: all registers, then the finishes, then the recordings. */
async function runScript(sandbox: SandboxPortal): Promise<void> {
  const bucket = new ScriptBucket();
  const registered = await scriptBatches(
    sandbox.webhookUrl,
    bucket,
    BACKLOG.map((call) => [
      'telephony.externalcall.register',
      {
        USER_PHONE_INNER: EXTENSION,
        PHONE_NUMBER: call.phone,
        TYPE: call.inbound ? 2 : 1,
        CALL_START_DATE: '2026-11-24T10:00:00+01:00',
        CRM_CREATE: 1,
        SHOW: 0,
      },
    ]),
  );
  const callIds = registered.map((result) => (result as { CALL_ID: string }).CALL_ID);
  await scriptBatches(
    sandbox.webhookUrl,
    bucket,
    BACKLOG.map((call) => [
      'telephony.externalcall.finish',
      { CALL_ID: callIds[call.n], USER_PHONE_INNER: EXTENSION, DURATION: 60, STATUS_CODE: 200 },
    ]),
  );
  await scriptBatches(
    sandbox.webhookUrl,
    bucket,
    BACKLOG.filter((call) => call.recordingUrl).map((call) => [
      'telephony.externalcall.attachRecord',
      { CALL_ID: callIds[call.n], FILENAME: `${call.n}.mp3`, RECORD_URL: call.recordingUrl },
    ]),
  );
}

function bridgeEnv(sandbox: SandboxPortal, database: string, burst: number): Record<string, string> {
  return {
    NODE_ENV: 'development',
    PBX_TOKENS: TOKEN,
    B24_WEBHOOK_URL: sandbox.webhookUrl,
    DATABASE_URL: `sqlite:${database}`,
    B24_DEFAULT_USER_ID: '1',
    PBX_RATE_LIMIT_RPS: '100000',
    LOG_LEVEL: 'warn',
    B24_RATE_BURST: String(burst),
  };
}

async function postBacklog(url: string): Promise<void> {
  const events = pbxEvents();
  for (let start = 0; start < events.length; start += 500) {
    const status = await postJson(`${url}/v1/calls/events`, events.slice(start, start + 500), TOKEN);
    if (status !== 202) throw new Error(`intake answered ${status}`);
  }
}

async function stopBridge(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

/**
 * The backlog stored by an earlier run of the bridge that delivered none of it: its portal (another
 * sandbox) allowed it one request in its whole life, which a lookup spends before the calls arrive.
 */
async function storeBacklog(database: string, burst: number): Promise<void> {
  const elsewhere = await SandboxPortal.start({ rateBurst: burst, rateLimitRps: RATE });
  const bridge = await startBuiltBridge({
    ...bridgeEnv(elsewhere, database, burst),
    B24_RATE_BURST: '1',
    B24_RATE_LIMIT_RPS: '0.0001',
  });
  try {
    await fetch(`${bridge.url}/v1/lookup?phone=${encodeURIComponent('+4930999999')}`, {
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    await postBacklog(bridge.url);
  } finally {
    await stopBridge(bridge.child);
    await elsewhere.close();
  }
  if (elsewhere.requests().some((entry) => entry.method === 'batch')) {
    throw new Error('the storing run delivered calls');
  }
}

async function runBridge(sandbox: SandboxPortal, database: string, burst: number, waiting: boolean) {
  if (waiting) await storeBacklog(database, burst);
  const bridge = await startBuiltBridge(bridgeEnv(sandbox, database, burst));
  try {
    if (!waiting) await postBacklog(bridge.url);
    while (callCommands(sandbox.requests()) < EXPECTED_COMMANDS) await sleep(200);
  } finally {
    bridge.child.kill('SIGKILL');
  }
}

const isCallRequest = (entry: RequestLogEntry) => entry.method === 'batch';

function callCommands(log: RequestLogEntry[]): number {
  return log
    .filter((entry) => isCallRequest(entry) && entry.status === 200)
    .reduce((sum, entry) => sum + entry.commands, 0);
}

function figures(log: RequestLogEntry[], burst: number) {
  const answered = log.filter((entry) => isCallRequest(entry) && entry.status === 200);
  const first = log[0].at;
  const last = answered[answered.length - 1].at;
  const seconds = (last - first) / 1000;
  const commands = callCommands(log);
  return {
    seconds: Number(seconds.toFixed(1)),
    callRequests: answered.length,
    commands,
    ratio: Number((commands / (BATCH * (burst + RATE * seconds))).toFixed(3)),
    portal503s: log.filter((entry) => entry.status === 503).length,
    otherRequestsBeforeLastCall: log.filter((entry) => !isCallRequest(entry) && entry.at <= last).length,
    otherMethods: [...new Set(log.filter((entry) => !isCallRequest(entry)).map((entry) => entry.method))],
  };
}

type Client = 'script' | 'bridgeWaiting' | 'bridgeArriving';
const CLIENTS: Client[] = ['script', 'bridgeWaiting', 'bridgeArriving'].filter(
  (client) => !process.env.BENCH_BURST_CLIENTS || process.env.BENCH_BURST_CLIENTS.split(',').includes(client),
) as Client[];

async function run(client: Client, burst: number, dir: string) {
  const sandbox = await SandboxPortal.start({
    rateBurst: burst,
    rateLimitRps: RATE,
    requestLogLimit: 200_000,
  });
  try {
    const database = join(dir, `${client}-${burst}.sqlite`);
    if (client === 'script') await runScript(sandbox);
    else await runBridge(sandbox, database, burst, client === 'bridgeWaiting');
    return figures(sandbox.requests(), burst);
  } finally {
    await sandbox.close();
  }
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'bridge-burst-'));
  const results: Record<string, Record<Client, ReturnType<typeof figures>> & { bridgeAhead: boolean }> = {};
  try {
    for (const burst of BURSTS) {
      const byClient = {} as Record<Client, ReturnType<typeof figures>>;
      for (const client of CLIENTS) byClient[client] = await run(client, burst, dir);
      const { script, bridgeWaiting, bridgeArriving } = byClient;
      const bridgeAhead = [bridgeWaiting, bridgeArriving].every(
        (bridge) => bridge?.ratio > script?.ratio && bridge.portal503s === 0,
      );
      results[`burst${burst}`] = { ...byClient, bridgeAhead };
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    JSON.stringify(
      {
        machine: { cpus: cpus().length, node: process.version },
        dist: DIST,
        calls: CALLS,
        commands: EXPECTED_COMMANDS,
        rate: RATE,
        burst: results,
      },
      null,
      2,
    ),
  );
  process.exit(0);
}

void main();
