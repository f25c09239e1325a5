/**
 * `npm run bench`: the built bridge as a child process on a fresh SQLite file, the sandbox portal at its
 * default budget (2 requests/s, burst 50) in this process. Prints one JSON document of figures:
 *  - ingest: events/s and request latency p50/p99 for single-event POSTs at a fixed concurrency;
 *  - delivery: commands/s against the ceiling (requests/s × 50) while a backlog drains, and 503s seen;
 *  - memory: the bridge's peak RSS with 100 000 events queued (portal down).
 * Two intake rounds of BENCH_CALLS calls each (1 and 10 events per request) build the backlog.
 * Sizes can be changed with BENCH_CALLS, BENCH_CONCURRENCY, BENCH_QUEUED_EVENTS.
 */
import axios from 'axios';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxPortal } from '../sandbox';
import { startBridgeProcess } from '../test/support/bridge-process';
import { deliveryFigures, ended, percentile, postJson, started } from './bench-support';

const CALLS = Number(process.env.BENCH_CALLS ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const QUEUED_EVENTS = Number(process.env.BENCH_QUEUED_EVENTS ?? 100_000);
const TOKEN = 'bench-token';

const http = axios.create({
  httpAgent: new Agent({ keepAlive: true, maxSockets: 64 }),
  validateStatus: () => true,
});

/** VmHWM: the most memory the process ever held; VmRSS: what it holds now. */
function memoryMb(pid: number, field: 'VmHWM' | 'VmRSS' = 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status);
  return match ? Math.round(Number(match[1]) / 1024) : NaN;
}

async function sandboxJson(sandbox: SandboxPortal, path: string) {
  return (await http.get(`${sandbox.url}/_sandbox/${path}`)).data;
}

/** POSTs of `perRequest` events, CONCURRENCY at a time: the PBX-facing latency while the backlog builds. */
async function ingest(url: string, events: object[], perRequest = 1) {
  const latencies: number[] = [];
  let next = 0;
  let rejected = 0;
  const begin = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < events.length) {
        const body = perRequest === 1 ? events[next] : events.slice(next, next + perRequest);
        next += perRequest;
        const sent = performance.now();
        const status = await postJson(`${url}/v1/calls/events`, body, TOKEN);
        latencies.push(performance.now() - sent);
        if (status !== 202) rejected += 1;
      }
    }),
  );
  const seconds = (performance.now() - begin) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    events: events.length,
    eventsPerRequest: perRequest,
    concurrency: CONCURRENCY,
    eventsPerSec: Math.round(events.length / seconds),
    p50Ms: Number(percentile(latencies, 50).toFixed(2)),
    p99Ms: Number(percentile(latencies, 99).toFixed(2)),
    rejected,
  };
}

async function deliveryRun(dir: string) {
  const sandbox = await SandboxPortal.start({ requestLogLimit: 100_000 });
  const bridge = await startBridgeProcess(env(sandbox, join(dir, 'delivery.sqlite')));
  try {
    // Warm-up (not measured): a long-running service has its code optimised; a fresh process has not.
    await ingest(
      bridge.url,
      Array.from({ length: 500 }, (_, n) => [started(`w-${n}`, n), ended(`w-${n}`)]).flat(),
    );
    const events = Array.from({ length: CALLS }, (_, n) => [started(`b-${n}`, n), ended(`b-${n}`)]).flat();
    const firstRequestAt = Date.now();
    const intake = await ingest(bridge.url, events);
    const batchedEvents = Array.from({ length: CALLS }, (_, n) => [
      started(`c-${n}`, n),
      ended(`c-${n}`),
    ]).flat();
    const intakeBatched = await ingest(bridge.url, batchedEvents, 10);
    for (;;) {
      const calls: { finished: unknown }[] = await sandboxJson(sandbox, 'calls').then((d) =>
        Array.isArray(d) ? d : d.calls,
      );
      if (calls.filter((call) => call.finished).length >= 2 * CALLS + 500) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const seconds = (Date.now() - firstRequestAt) / 1000;
    const stats = await sandboxJson(sandbox, 'stats');
    const log: { at: number; commands: number }[] = await sandboxJson(sandbox, 'requests').then((d) =>
      Array.isArray(d) ? d : d.requests,
    );
    return {
      intake,
      intakeBatched,
      delivery: { calls: 2 * CALLS + 500, ...deliveryFigures(log, stats, seconds) },
      bridgePeakRssMb: memoryMb(bridge.child.pid!),
    };
  } finally {
    bridge.child.kill('SIGKILL');
    await bridge.exited;
    await sandbox.close();
  }
}

async function memoryRun(dir: string) {
  const sandbox = await SandboxPortal.start();
  await http.post(`${sandbox.url}/_sandbox/faults`, { kind: 'outage' });
  const bridge = await startBridgeProcess(env(sandbox, join(dir, 'memory.sqlite')));
  try {
    const calls = QUEUED_EVENTS / 2;
    for (let chunk = 0; chunk < calls; chunk += 250) {
      const body = Array.from({ length: Math.min(250, calls - chunk) }, (_, i) => [
        started(`m-${chunk + i}`, chunk + i),
        ended(`m-${chunk + i}`),
      ]).flat();
      const response = await http.post(`${bridge.url}/v1/calls/events`, body, {
        headers: { Authorization: `Bearer ${TOKEN}` },
      });
      if (response.status !== 202) throw new Error(`intake answered ${response.status}`);
    }
    const health = (await http.get(`${bridge.url}/health/ready`)).data;
    await new Promise((resolve) => setTimeout(resolve, 5000));
    return {
      queuedEvents: QUEUED_EVENTS,
      queueDepth: health?.info?.portal?.queueDepth ?? health?.details?.portal?.queueDepth,
      bridgeRssMbWithQueueHeld: memoryMb(bridge.child.pid!, 'VmRSS'),
      bridgePeakRssMbDuringIntake: memoryMb(bridge.child.pid!),
    };
  } finally {
    bridge.child.kill('SIGKILL');
    await bridge.exited;
    await sandbox.close();
  }
}

function env(sandbox: SandboxPortal, file: string): Record<string, string> {
  return {
    NODE_ENV: 'development', // production refuses the sandbox's http URL and short tokens
    PBX_TOKENS: TOKEN,
    B24_WEBHOOK_URL: sandbox.webhookUrl,
    DATABASE_URL: `sqlite:${file}`,
    B24_DEFAULT_USER_ID: '1',
    PBX_RATE_LIMIT_RPS: '100000',
    LOG_LEVEL: 'warn',
  };
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'bridge-bench-'));
  try {
    const delivery = await deliveryRun(dir);
    const memory = await memoryRun(dir);
    console.log(
      JSON.stringify(
        { machine: { cpus: cpus().length, node: process.version }, ...delivery, memory },
        null,
        2,
      ),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  process.exit(0);
}

void main();
