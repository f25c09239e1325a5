/**
 * Delivery at the ceiling of a real portal (part of `npm run bench`): the built bridge as a child process on
 * a fresh SQLite file, the sandbox portal in this process with the budget, answer time and operating-time
 * limit of each scenario. A backlog of calls (10 % with a recording) is posted at once; delivery starts
 * with the first of them. Prints one JSON document.
 *
 * The ratio is the issue's: commands the portal executed ÷ the most its bucket allowed while they arrived,
 * 50 × (burst + rate × seconds from the first request's arrival to the last's).
 *
 * Scenarios (BENCH_SCENARIOS=comma list to pick some):
 *  - fast-burst10: bucket 10, answers at once;
 *  - slow-2s-burst10: bucket 10, 40 ms of server time a command (a batch of 50 takes 2 s);
 *  - fast-burst50: bucket 50 (the default plan), answers at once: with a short backlog the burst weighs on
 *    the denominator, so this is reported, not targeted;
 *  - operating-60s: bucket 10, 40 ms a command, the operating-time limit scaled to a 60-s window (48 s per
 *    method, as 480 s in 600 s), the bridge told the same: BENCH_OPERATING_SEC (300) seconds of backlog,
 *    against min(budget ceiling, what the operating limit allows).
 * BENCH_CEILING_CALLS (1500) sizes the first three; BRIDGE_DIST benches another build's dist/.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxOptions, SandboxPortal } from '../sandbox';
import { DIST, postJson, startBuiltBridge } from './bench-support';

const CALLS = Number(process.env.BENCH_CEILING_CALLS ?? 1500);
const OPERATING_SEC = Number(process.env.BENCH_OPERATING_SEC ?? 300);
const ONLY = process.env.BENCH_SCENARIOS?.split(',').map((name) => name.trim());
const TOKEN = 'bench-token-ceiling';
const RATE = 2;
const COMMANDS_PER_REQUEST = 50;

interface Scenario {
  name: string;
  burst: number;
  commandMs: number;
  calls: number;
  /** Scaled operating-time limit (sandbox and bridge alike). */
  operating?: { windowSec: number; limitSec: number };
  /** Measure this long from the first request instead of until the backlog is delivered. */
  measureSec?: number;
}

const SCENARIOS: Scenario[] = [
  { name: 'fast-burst10', burst: 10, commandMs: 0, calls: CALLS },
  { name: 'slow-2s-burst10', burst: 10, commandMs: 40, calls: CALLS },
  { name: 'fast-burst50', burst: 50, commandMs: 0, calls: CALLS },
  {
    name: 'operating-60s',
    burst: 10,
    commandMs: 40,
    // 42 commands/s at most (below) for the measured time, and a margin so the backlog never runs out.
    calls: Math.ceil((OPERATING_SEC * 25) / 1.1) + 500,
    operating: { windowSec: 60, limitSec: 48 },
    measureSec: OPERATING_SEC,
  },
];

function callEvents(calls: number) {
  return Array.from({ length: calls }, (_, n) => [
    {
      event: 'call.started',
      callId: `ceiling-${n}`,
      direction: n % 2 ? 'inbound' : 'outbound',
      phoneNumber: `+4930${String(2000000 + n)}`,
      extension: '101',
      at: '2026-11-24T10:00:00+01:00',
    },
    {
      event: 'call.ended',
      callId: `ceiling-${n}`,
      at: '2026-11-24T10:01:00+01:00',
      durationSec: 60,
      status: 'answered',
      ...(n % 10 === 0 ? { recordingUrl: `https://pbx.example.com/rec/${n}.mp3` } : {}),
    },
  ]).flat();
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

async function run(scenario: Scenario, dir: string) {
  const options: SandboxOptions = {
    rateBurst: scenario.burst,
    rateLimitRps: RATE,
    commandMs: scenario.commandMs,
    requestLogLimit: 200_000,
    ...(scenario.operating
      ? { operatingWindowSec: scenario.operating.windowSec, operatingLimitSec: scenario.operating.limitSec }
      : {}),
  };
  const sandbox = await SandboxPortal.start(options);
  const bridge = await startBuiltBridge({
    NODE_ENV: 'development',
    PBX_TOKENS: TOKEN,
    B24_WEBHOOK_URL: sandbox.webhookUrl,
    DATABASE_URL: `sqlite:${join(dir, `${scenario.name}.sqlite`)}`,
    B24_DEFAULT_USER_ID: '1',
    PBX_RATE_LIMIT_RPS: '100000',
    LOG_LEVEL: 'warn',
    B24_RATE_BURST: String(scenario.burst),
    ...(scenario.operating
      ? {
          B24_OPERATING_WINDOW_SEC: String(scenario.operating.windowSec),
          B24_OPERATING_LIMIT_SEC: String(scenario.operating.limitSec),
        }
      : {}),
  });
  try {
    const events = callEvents(scenario.calls);
    for (let start = 0; start < events.length; start += 500) {
      const status = await postJson(`${bridge.url}/v1/calls/events`, events.slice(start, start + 500), TOKEN);
      if (status !== 202) throw new Error(`intake answered ${status}`);
    }
    const expected = scenario.calls * 2 + Math.ceil(scenario.calls / 10);
    const firstAt = () => sandbox.requests().find((entry) => entry.method === 'batch')?.at;
    for (;;) {
      const first = firstAt();
      if (scenario.measureSec && first !== undefined && Date.now() - first >= scenario.measureSec * 1000) {
        break;
      }
      if (!scenario.measureSec && sandbox.stats().commands >= expected) break;
      await sleep(200);
    }
    return figures(scenario, sandbox);
  } finally {
    bridge.child.kill('SIGKILL');
    await sandbox.close();
  }
}

function figures(scenario: Scenario, sandbox: SandboxPortal) {
  const batches = sandbox.requests().filter((entry) => entry.method === 'batch');
  const first = batches[0].at;
  const end = scenario.measureSec ? first + scenario.measureSec * 1000 : Infinity;
  const measured = batches.filter((entry) => entry.at <= end && entry.status === 200);
  const last = measured[measured.length - 1].at;
  // A fixed span is measured whole (the limit allows limitSec in every window of it), else to the last request.
  const seconds = scenario.measureSec ?? (last - first) / 1000;
  const stats = sandbox.stats();
  // Commands of answered batches, less those the portal refused for operating time (they did not run).
  const commands = measured.reduce((sum, entry) => sum + entry.commands, 0) - stats.operationTimeLimited;
  const bucketAllowed = COMMANDS_PER_REQUEST * (scenario.burst + RATE * seconds);
  const perRequest: Record<string, number> = {};
  for (const entry of measured) perRequest[entry.commands] = (perRequest[entry.commands] ?? 0) + 1;
  const result: Record<string, unknown> = {
    calls: scenario.calls,
    burst: scenario.burst,
    commandMs: scenario.commandMs,
    seconds: Number(seconds.toFixed(1)),
    requests: measured.length,
    commands,
    commandsPerSec: Number((commands / seconds).toFixed(1)),
    ratio: Number((commands / bucketAllowed).toFixed(3)),
    portal503s: stats.queryLimitExceeded,
    operationTimeLimited: stats.operationTimeLimited,
    requestsByCommands: perRequest,
    mostBatchesInFlight: mostInFlight(measured, scenario.commandMs),
  };
  if (scenario.operating) {
    // Each method may use limitSec per windowSec; a call needs a register and a finish (each its own
    // method), a tenth of them an attachRecord: the calls/s one method allows, times 2.1 commands a call.
    const perMethod =
      scenario.operating.limitSec / scenario.operating.windowSec / (scenario.commandMs / 1000);
    const operatingAllows = perMethod * 2.1;
    const ceiling = Math.min(RATE * COMMANDS_PER_REQUEST, operatingAllows);
    Object.assign(result, {
      windowSec: scenario.operating.windowSec,
      limitSecPerMethod: scenario.operating.limitSec,
      operatingAllowsCommandsPerSec: Number(operatingAllows.toFixed(1)),
      budgetCeilingCommandsPerSec: RATE * COMMANDS_PER_REQUEST,
      ratioOfMinimum: Number((commands / seconds / ceiling).toFixed(3)),
      portalOperating: sandbox.operating().methods,
    });
  }
  return result;
}

/** The most batches the portal was answering at once: each is busy for commands × commandMs from arrival. */
function mostInFlight(log: { at: number; commands: number }[], commandMs: number): number {
  if (commandMs === 0) return 0;
  const edges = log.flatMap((entry): [number, number][] => [
    [entry.at, 1],
    [entry.at + entry.commands * commandMs, -1],
  ]);
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let open = 0;
  let most = 0;
  for (const [, change] of edges) {
    open += change;
    most = Math.max(most, open);
  }
  return most;
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'bridge-ceiling-'));
  const results: Record<string, unknown> = {};
  try {
    for (const scenario of SCENARIOS) {
      if (ONLY && !ONLY.includes(scenario.name)) continue;
      results[scenario.name] = await run(scenario, dir);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    JSON.stringify(
      { machine: { cpus: cpus().length, node: process.version }, dist: DIST, ceiling: results },
      null,
      2,
    ),
  );
  process.exit(0);
}

void main();
