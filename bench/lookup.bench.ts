/**
 * Lookup figures. The built bridge (dist/main.js) as a child process on a fresh SQLite file, the sandbox
 * portal at its default budget (2 requests/s, burst 50) in this process. Prints one JSON document:
 *  - underBacklog: `GET /v1/lookup` latency p50/p95 for cache misses (each one portal request) while a
 *    1000-call backlog drains, one lookup every BENCH_LOOKUP_INTERVAL_MS (target p95 < 1 s);
 *  - warmCache: latency p50/p99 for numbers already cached, sequential requests (target p99 < 5 ms),
 *    beside the same figures for `/health/live` (the machine's HTTP floor).
 * Run after `npx nest build`: `node -r ts-node/register/transpile-only bench/lookup.bench.ts`.
 */
import axios from 'axios';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CrmSeedRecord, defaultSeed, SandboxPortal } from '../sandbox';
import { startBridgeProcess } from '../test/support/bridge-process';

const CALLS = Number(process.env.BENCH_CALLS ?? 1000);
/** Calls delivered first, so the portal's burst allowance is used up when the measured backlog starts. */
const BURST_CALLS = 1500;
const LOOKUP_INTERVAL_MS = Number(process.env.BENCH_LOOKUP_INTERVAL_MS ?? 1000);
const WARM_NUMBERS = 40;
const WARM_LOOKUPS = Number(process.env.BENCH_WARM_LOOKUPS ?? 5000);
const KNOWN_CONTACTS = 500;
const TOKEN = 'bench-token';

const http = axios.create({
  httpAgent: new Agent({ keepAlive: true, maxSockets: 64 }),
  validateStatus: () => true,
});

/** Contacts with numbers +49 40 6000 0000…, written nationally or internationally, spread over employees 2-4. */
function knownContacts(): CrmSeedRecord[] {
  return Array.from({ length: KNOWN_CONTACTS }, (_, n) => ({
    ID: 100 + n,
    NAME: 'Known',
    LAST_NAME: `Client ${n}`,
    ASSIGNED_BY_ID: 2 + (n % 3),
    DATE_MODIFY: '2026-01-01T10:00:00+01:00',
    PHONE: [
      {
        VALUE: n % 2 ? `040 6000 ${String(n).padStart(4, '0')}` : `+49 40 6000 ${String(n).padStart(4, '0')}`,
        VALUE_TYPE: 'WORK',
      },
    ],
  }));
}
const knownNumber = (n: number) => `+49406000${String(n).padStart(4, '0')}`;
const unknownNumber = (n: number) => `+49407000${String(n).padStart(4, '0')}`;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function summary(latencies: number[]) {
  const sorted = [...latencies].sort((a, b) => a - b);
  const ms = (value: number) => Number(value.toFixed(2));
  return {
    requests: sorted.length,
    p50Ms: ms(percentile(sorted, 50)),
    p95Ms: ms(percentile(sorted, 95)),
    p99Ms: ms(percentile(sorted, 99)),
    maxMs: ms(sorted[sorted.length - 1]),
  };
}

async function lookup(url: string, phone: string) {
  const sent = performance.now();
  const response = await http.get(`${url}/v1/lookup`, {
    params: { phone },
    headers: { Authorization: `Bearer ${TOKEN}` },
  });
  if (response.status !== 200) throw new Error(`lookup answered ${response.status}`);
  return { ms: performance.now() - sent, body: response.data as { match: unknown; reason?: string } };
}

/** In process: the sandbox's view of the calls, without serialising thousands of them per poll. */
function finishedCalls(sandbox: SandboxPortal): number {
  return sandbox.calls().filter((call) => call.finished).length;
}

async function queueBacklog(url: string, prefix: string, calls: number): Promise<void> {
  const events = Array.from({ length: calls }, (_, n) => [
    {
      event: 'call.started',
      callId: `${prefix}-${n}`,
      direction: 'inbound',
      phoneNumber: `+4930${String(2000000 + n)}`,
      extension: '101',
      at: '2026-11-22T10:00:00+01:00',
    },
    {
      event: 'call.ended',
      callId: `${prefix}-${n}`,
      at: '2026-11-22T10:01:00+01:00',
      durationSec: 60,
      status: 'answered',
    },
  ]).flat();
  for (let offset = 0; offset < events.length; offset += 500) {
    const response = await http.post(`${url}/v1/calls/events`, events.slice(offset, offset + 500), {
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    if (response.status !== 202) throw new Error(`intake answered ${response.status}`);
  }
}

/**
 * Cache misses, one every LOOKUP_INTERVAL_MS, half of them known clients, while the backlog drains. The
 * portal's burst allowance (50 requests) would swallow a 1000-call backlog (40 requests) at once, so a
 * first backlog uses it up and the measured one drains at the sustained 2 requests/s.
 */
async function lookupsUnderBacklog(url: string, sandbox: SandboxPortal) {
  await queueBacklog(url, 'burst', BURST_CALLS);
  while (finishedCalls(sandbox) < BURST_CALLS) await new Promise((resolve) => setTimeout(resolve, 200));
  const latencies: number[] = [];
  let matched = 0;
  const reasons: string[] = [];
  const begin = Date.now();
  await queueBacklog(url, 'measured', CALLS);
  for (let n = 0; finishedCalls(sandbox) < BURST_CALLS + CALLS; n++) {
    const next = Date.now() + LOOKUP_INTERVAL_MS;
    const { ms, body } = await lookup(url, n % 2 ? unknownNumber(n) : knownNumber(n));
    latencies.push(ms);
    if (body.match) matched += 1;
    if (body.reason) reasons.push(body.reason);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - Date.now())));
  }
  const { data: stats } = await http.get(`${sandbox.url}/_sandbox/stats`);
  return {
    calls: CALLS,
    callsDeliveredBeforeToUseUpTheBurst: BURST_CALLS,
    drainSeconds: Number(((Date.now() - begin) / 1000).toFixed(1)),
    lookupIntervalMs: LOOKUP_INTERVAL_MS,
    ...summary(latencies),
    matched,
    answeredWithoutMatchForAReason: reasons.length,
    reasons: [...new Set(reasons)],
    portal503s: stats.byStatus?.['503'] ?? 0,
  };
}

/**
 * Numbers already cached, sequential requests after a warm-up. `/health/live` is measured the same way
 * beside it: the HTTP floor of this machine, which on a busy shared host sets the tail.
 */
async function lookupsFromWarmCache(url: string) {
  const numbers = Array.from({ length: WARM_NUMBERS }, (_, n) => knownNumber(KNOWN_CONTACTS - 1 - n));
  for (const phone of numbers) {
    const { body } = await lookup(url, phone);
    if (!body.match) {
      throw new Error(`warming the cache: no match for ${phone} (${body.reason ?? 'unknown'})`);
    }
  }
  const measure = async (request: (n: number) => Promise<unknown>) => {
    for (let n = 0; n < WARM_LOOKUPS / 10; n++) await request(n);
    const latencies: number[] = [];
    for (let n = 0; n < WARM_LOOKUPS; n++) {
      const sent = performance.now();
      await request(n);
      latencies.push(performance.now() - sent);
    }
    return summary(latencies);
  };
  const cached = await measure((n) => lookup(url, numbers[n % WARM_NUMBERS]));
  const floor = await measure(() => http.get(`${url}/health/live`));
  return { numbers: WARM_NUMBERS, ...cached, httpFloorHealthLive: floor };
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'bridge-lookup-bench-'));
  const seed = defaultSeed();
  const sandbox = await SandboxPortal.start({
    requestLogLimit: 100_000,
    seed: { contacts: [...seed.contacts, ...knownContacts()] },
  });
  const bridge = await startBridgeProcess({
    NODE_ENV: 'development', // production refuses the sandbox's http URL and short tokens
    PBX_TOKENS: TOKEN,
    B24_WEBHOOK_URL: sandbox.webhookUrl,
    DATABASE_URL: `sqlite:${join(dir, 'lookup.sqlite')}`,
    B24_DEFAULT_USER_ID: '1',
    DEFAULT_COUNTRY: 'DE',
    PBX_RATE_LIMIT_RPS: '100000',
    LOG_LEVEL: 'warn',
  });
  try {
    const underBacklog = await lookupsUnderBacklog(bridge.url, sandbox);
    const warmCache = await lookupsFromWarmCache(bridge.url);
    console.log(
      JSON.stringify(
        {
          machine: { cpus: cpus().length, node: process.version },
          budget: { requestsPerSec: 2, burst: 50 },
          deadlineMs: 1500,
          underBacklog,
          warmCache,
        },
        null,
        2,
      ),
    );
  } finally {
    bridge.child.kill('SIGKILL');
    await bridge.exited;
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
  process.exit(0);
}

void main();
