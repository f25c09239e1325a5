/**
 * Delivery under the portal's operating-time limit (part of `npm run bench`): the built bridge as a child
 * process on a fresh SQLite file, the sandbox portal in this process with the limit scaled to
 * BENCH_OPERATING_LIMIT_SEC (60) seconds of server time per method in a BENCH_OPERATING_WINDOW_SEC (60)
 * second window, freed a tenth of the window at a time, and the bridge told the same. Each command takes
 * BENCH_OPERATING_COMMAND_MS (80) ms of server time, so a method may run 12.5 commands a second: register
 * and finish together need 25 commands a second, half a full batch a second, far under the 2 requests/s
 * budget (100 commands/s). The operating limit binds, not the request budget.
 *
 * BENCH_OPERATING_CALLS calls are posted at once (register + finish each, no recordings): 3 300 with 80-ms
 * commands, as many more as shorter commands need (6 600 with 40 ms), so the backlog lasts. The first
 * window after the first batch starts empty (any client fills it at once), so the bench measures the steady
 * state: the BENCH_OPERATING_MEASURE_SEC (180) seconds after it, where only what leaves the window may be
 * used again; the calls (4.4 windows of registers) keep both methods busy to its end. Printed per scenario
 * (one JSON document):
 *  - deliveredFraction: server seconds run in the measured span ÷ what the limit allowed in it, limit ×
 *    seconds ÷ window per limited method (register and finish; `batch` alone with `batch-whole`);
 *  - refusedCommands (429 OPERATION_TIME_LIMIT inside batches and direct calls);
 *  - longestGapSec: the longest time without a request reaching the portal in the measured span (the window
 *    may be full: the first window's use leaves as it came, so a gap can be the portal's, not a stall);
 *  - longestStallSec: the longest time without a request while the portal's own count (sampled each second)
 *    left a method at most 90 % of its limit: time the bridge could have used and did not;
 *  - the portal's count per method, sampled each second after the first window (min/mean/max), and the
 *    bridge's estimate against it (/health/ready) at the largest gap between them.
 * Scenarios (BENCH_SCENARIOS=comma list to pick): `run` (as real portals do: a batch itself is not charged,
 * each command is, to its own method, when its run ends), `batch-whole` (the other reading: a batch's whole
 * server time is charged to the method `batch`, which is what gets blocked; the delivered fraction is then
 * of what `batch`'s one limit allowed), `batch-upfront` (a fault: the portal charges a batch's whole server
 * time on arrival to every method in it, refused commands included) and `batch-upfront-no-reset` (the same
 * fault, and a command refused inside a batch names neither the count nor the reset). BRIDGE_DIST benches
 * another build's dist/.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxPortal } from '../sandbox';
import { OperatingCharge } from '../sandbox/operating-time';
import { DIST, postJson, startBuiltBridge } from './bench-support';

const COMMAND_MS = Number(process.env.BENCH_OPERATING_COMMAND_MS ?? 80);
const CALLS = Number(process.env.BENCH_OPERATING_CALLS ?? Math.ceil((3300 * 80) / Math.max(1, COMMAND_MS)));
const MEASURE_SEC = Number(process.env.BENCH_OPERATING_MEASURE_SEC ?? 180);
const WINDOW_SEC = Number(process.env.BENCH_OPERATING_WINDOW_SEC ?? 60);
const LIMIT_SEC = Number(process.env.BENCH_OPERATING_LIMIT_SEC ?? 60);
const ONLY = process.env.BENCH_SCENARIOS?.split(',').map((name) => name.trim());
const TOKEN = 'bench-token-operating';
const REGISTER = 'telephony.externalcall.register';
const FINISH = 'telephony.externalcall.finish';
const METHODS = [REGISTER, FINISH];

const SCENARIOS: OperatingCharge[] = ['run', 'batch-whole', 'batch-upfront', 'batch-upfront-no-reset'];

/** The methods the portal limits in a scenario: the commands' own, or `batch` when it charges batches whole. */
function limitedMethods(charge: OperatingCharge): string[] {
  return charge === 'batch-whole' ? ['batch'] : METHODS;
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

function callEvents(calls: number) {
  return Array.from({ length: calls }, (_, n) => [
    {
      event: 'call.started',
      callId: `operating-${n}`,
      direction: n % 2 ? 'inbound' : 'outbound',
      phoneNumber: `+4930${String(3000000 + n)}`,
      extension: '101',
      at: '2026-11-24T10:00:00+01:00',
    },
    {
      event: 'call.ended',
      callId: `operating-${n}`,
      at: '2026-11-24T10:01:00+01:00',
      durationSec: 60,
      status: 'answered',
    },
  ]).flat();
}

interface Sample {
  at: number;
  portal: Record<string, number>;
  bridge: Record<string, number>;
}

async function run(charge: OperatingCharge, dir: string) {
  const sandbox = await SandboxPortal.start({
    commandMs: COMMAND_MS,
    operatingWindowSec: WINDOW_SEC,
    operatingLimitSec: LIMIT_SEC,
    operatingCharge: charge,
    requestLogLimit: 200_000,
  });
  const bridge = await startBuiltBridge({
    NODE_ENV: 'development',
    PBX_TOKENS: TOKEN,
    B24_WEBHOOK_URL: sandbox.webhookUrl,
    DATABASE_URL: `sqlite:${join(dir, `${charge}.sqlite`)}`,
    B24_DEFAULT_USER_ID: '1',
    PBX_RATE_LIMIT_RPS: '100000',
    LOG_LEVEL: 'warn',
    B24_OPERATING_WINDOW_SEC: String(WINDOW_SEC),
    B24_OPERATING_LIMIT_SEC: String(LIMIT_SEC),
  });
  try {
    const events = callEvents(CALLS);
    for (let start = 0; start < events.length; start += 500) {
      const status = await postJson(`${bridge.url}/v1/calls/events`, events.slice(start, start + 500), TOKEN);
      if (status !== 202) throw new Error(`intake answered ${status}`);
    }
    const firstAt = () => sandbox.requests().find((entry) => entry.method === 'batch')?.at;
    const samples: Sample[] = [];
    for (;;) {
      const first = firstAt();
      const now = Date.now();
      if (first !== undefined && now - first >= (WINDOW_SEC + MEASURE_SEC) * 1000 + 500) break;
      if (first !== undefined && now - first >= WINDOW_SEC * 1000) {
        samples.push(await sample(sandbox, bridge.url, limitedMethods(charge)));
      }
      await sleep(first === undefined ? 100 : 1000);
    }
    return figures(sandbox, samples, limitedMethods(charge));
  } finally {
    bridge.child.kill('SIGKILL');
    await sandbox.close();
  }
}

async function sample(sandbox: SandboxPortal, url: string, limited: string[]): Promise<Sample> {
  const methods = sandbox.operating().methods;
  const portal = Object.fromEntries(limited.map((method) => [method, methods[method]?.usedSec ?? 0]));
  const bridge: Record<string, number> = {};
  try {
    const health = (await (await fetch(`${url}/health/ready`)).json()) as {
      details?: { portal?: { operatingTime?: { method: string; usedSec: number }[] } };
    };
    for (const use of health.details?.portal?.operatingTime ?? []) bridge[use.method] = use.usedSec;
  } catch {
    // the estimate is a detail: a missed sample leaves it out
  }
  return { at: Date.now(), portal, bridge };
}

function figures(sandbox: SandboxPortal, samples: Sample[], limited: string[]) {
  const requests = sandbox.requests().filter((entry) => entry.path.startsWith('/rest'));
  const from = requests.find((entry) => entry.method === 'batch')!.at + WINDOW_SEC * 1000;
  const end = from + MEASURE_SEC * 1000;
  const measured = requests.filter((entry) => entry.at >= from && entry.at <= end);
  const ran: Record<string, number> = {};
  for (const run of sandbox.operatingRuns()) {
    if (run.at >= from && run.at < end) ran[run.method] = (ran[run.method] ?? 0) + 1;
  }
  const arrivals = requests.map((entry) => entry.at);
  let stall = 0;
  let roomSince: number | undefined;
  for (const entry of samples.filter((sampled) => sampled.at >= from && sampled.at <= end)) {
    const room = limited.some((method) => entry.portal[method] <= 0.9 * LIMIT_SEC);
    if (!room) {
      roomSince = undefined;
      continue;
    }
    roomSince ??= entry.at;
    const lastRequest = arrivals.filter((at) => at <= entry.at).pop() ?? from;
    stall = Math.max(stall, entry.at - Math.max(lastRequest, roomSince));
  }
  let longestGap = 0;
  let previous = from;
  for (const entry of [...measured, { at: end }]) {
    longestGap = Math.max(longestGap, entry.at - previous);
    previous = entry.at;
  }
  const ranSec = METHODS.reduce((sum, method) => sum + (ran[method] ?? 0), 0) * (COMMAND_MS / 1000);
  const allowedSec = limited.length * LIMIT_SEC * (MEASURE_SEC / WINDOW_SEC);
  const batches = measured.filter((entry) => entry.method === 'batch' && entry.status === 200);
  const operating = sandbox.operating();
  const perMethod = Object.fromEntries(
    [...new Set([...METHODS, ...limited])].map((method) => {
      const used = samples.map((entry) => entry.portal[method] ?? 0);
      return [
        method,
        {
          ran: ran[method] ?? 0,
          portalUsedSec: {
            min: Number(Math.min(...used).toFixed(1)),
            mean: Number((used.reduce((a, b) => a + b, 0) / Math.max(1, used.length)).toFixed(1)),
            max: Number(Math.max(...used).toFixed(1)),
          },
          // Where the bridge's estimate and the portal's count differed most (estimate − count).
          widestEstimateGap: samples.reduce(
            (widest, entry) => {
              const gap = (entry.bridge[method] ?? 0) - (entry.portal[method] ?? 0);
              return Math.abs(gap) > Math.abs(widest.gap)
                ? { gap: Number(gap.toFixed(1)), bridge: entry.bridge[method], portal: entry.portal[method] }
                : widest;
            },
            { gap: 0 } as { gap: number; bridge?: number; portal?: number },
          ),
        },
      ];
    }),
  );
  return {
    calls: CALLS,
    windowSec: WINDOW_SEC,
    limitSecPerMethod: LIMIT_SEC,
    commandMs: COMMAND_MS,
    measuredSec: MEASURE_SEC,
    deliveredFraction: Number((ranSec / allowedSec).toFixed(3)),
    ranServerSec: Number(ranSec.toFixed(1)),
    allowedServerSec: allowedSec,
    refusedCommands: operating.refusals
      .filter((refusal) => refusal.at >= from && refusal.at < end)
      .reduce((sum, refusal) => sum + refusal.commands, 0),
    refusedCommandsAll: operating.refused,
    http429: measured.filter((entry) => entry.status === 429).length,
    portal503s: measured.filter((entry) => entry.status === 503).length,
    longestGapSec: Number((longestGap / 1000).toFixed(1)),
    longestStallSec: Number((stall / 1000).toFixed(1)),
    requests: measured.length,
    commandsPerBatch: Number(
      (batches.reduce((sum, entry) => sum + entry.commands, 0) / Math.max(1, batches.length)).toFixed(1),
    ),
    perMethod,
  };
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'bridge-operating-'));
  const results: Record<string, unknown> = {};
  try {
    for (const charge of SCENARIOS) {
      if (ONLY && !ONLY.includes(charge)) continue;
      results[charge] = await run(charge, dir);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    JSON.stringify(
      { machine: { cpus: cpus().length, node: process.version }, dist: DIST, operating: results },
      null,
      2,
    ),
  );
  process.exit(0);
}

void main();
