/**
 * Ring-to-card (part of `npm run bench`): the time from the `202` of a ringing call's `call.started` to the
 * portal having the call registered (its card popped), and to the rest of its ring group being shown the
 * card. The built bridge is a child process on a fresh SQLite file; the sandbox portal runs in this process
 * at 2 requests/s, so both times are read on one clock (the sandbox stamps each register and show).
 *
 * Scenarios (BENCH_SCENARIOS=comma list to pick some):
 *  - idle: nothing else waits; a ringing call every 700 ms;
 *  - backlog: BENCH_CARD_HISTORY (2 500) finished calls from a CDR import (register + finish each: 5 000
 *    commands, over 3 000 of them still waiting at the last ring) are posted first, bucket 10, then a ringing call every 700 ms while the history drains;
 *    the history still waiting is printed beside the figures.
 * BENCH_CARD_RINGS (20) ringing calls per scenario, waited for up to BENCH_CARD_WAIT_SEC (180); BENCH_CARD_PLAIN=1 rings one extension instead of a group; BRIDGE_DIST benches another build's dist/.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxPortal } from '../sandbox';
import { percentile, postJson, startBuiltBridge } from './bench-support';

const HISTORY = Number(process.env.BENCH_CARD_HISTORY ?? 2500);
const RINGS = Number(process.env.BENCH_CARD_RINGS ?? 20);
const ONLY = process.env.BENCH_SCENARIOS?.split(',').map((name) => name.trim());
const TOKEN = 'bench-token-card';
const RING_EVERY_MS = 700;
const WAIT_SEC = Number(process.env.BENCH_CARD_WAIT_SEC ?? 180);
/** BENCH_CARD_PLAIN=1: ring one extension, no `extensions` (for builds from before ring groups). */
const PLAIN = process.env.BENCH_CARD_PLAIN === '1';

interface Scenario {
  name: string;
  burst: number;
  history: number;
}

const SCENARIOS: Scenario[] = [
  { name: 'idle', burst: 50, history: 0 },
  { name: 'backlog', burst: 10, history: HISTORY },
];

/** A finished call as a CDR-only PBX posts it: register and finish are both due. */
function historyCall(n: number) {
  return {
    event: 'call.ended',
    callId: `history-${n}`,
    direction: n % 2 ? 'inbound' : 'outbound',
    phoneNumber: `+4930${String(3000000 + n)}`,
    extension: '101',
    startedAt: '2026-11-24T09:00:00+01:00',
    at: '2026-11-24T09:01:00+01:00',
    durationSec: 60,
    status: 'answered',
  };
}

function ringing(callId: string) {
  return {
    event: 'call.started',
    callId,
    direction: 'inbound',
    phoneNumber: '+4915112345678',
    ...(PLAIN ? { extension: '101' } : { extensions: ['101', '102', '103'] }),
    at: new Date().toISOString(),
  };
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

async function run(scenario: Scenario, dir: string) {
  const sandbox = await SandboxPortal.start({ rateBurst: scenario.burst, rateLimitRps: 2 });
  const bridge = await startBuiltBridge({
    NODE_ENV: 'development',
    PBX_TOKENS: TOKEN,
    B24_WEBHOOK_URL: sandbox.webhookUrl,
    DATABASE_URL: `sqlite:${join(dir, `${scenario.name}.sqlite`)}`,
    B24_DEFAULT_USER_ID: '1',
    PBX_RATE_LIMIT_RPS: '100000',
    LOG_LEVEL: 'warn',
    B24_RATE_BURST: String(scenario.burst),
  });
  try {
    // The employee directory's first copy (user.get) before the first ring.
    await sleep(1500);
    const history = Array.from({ length: scenario.history }, (_, n) => historyCall(n));
    for (let start = 0; start < history.length; start += 500) {
      const status = await postJson(
        `${bridge.url}/v1/calls/events`,
        history.slice(start, start + 500),
        TOKEN,
      );
      if (status !== 202) throw new Error(`intake answered ${status}`);
    }
    const rings: { callId: string; acceptedAt: number; waitingCommands: number }[] = [];
    for (let n = 0; n < RINGS; n += 1) {
      const callId = `ring-${scenario.name}-${n}`;
      const stats = sandbox.stats();
      const status = await postJson(`${bridge.url}/v1/calls/events`, [ringing(callId)], TOKEN);
      if (status !== 202) throw new Error(`intake answered ${status}`);
      const acceptedAt = Date.now();
      rings.push({ callId, acceptedAt, waitingCommands: Math.max(0, scenario.history * 2 - stats.commands) });
      await sleep(RING_EVERY_MS);
    }
    // Until every ringing call is on the portal with its group shown (a build without ringing first takes
    // as long as the history ahead of it), at most BENCH_CARD_WAIT_SEC.
    const deadline = Date.now() + WAIT_SEC * 1000;
    const done = () =>
      rings.every((ring) => {
        const call = sandbox.calls({ EXTERNAL_CALL_ID: ring.callId })[0];
        return call && (PLAIN || call.cardLog.some((change) => change.by === 'show'));
      });
    while (!done() && Date.now() < deadline) await sleep(200);
    const toCard: number[] = [];
    const toGroup: number[] = [];
    for (const ring of rings) {
      const call = sandbox.calls({ EXTERNAL_CALL_ID: ring.callId })[0];
      toCard.push(call ? call.registeredAt - ring.acceptedAt : Infinity);
      const shown = call?.cardLog.find((change) => change.by === 'show');
      toGroup.push(shown ? shown.at - ring.acceptedAt : Infinity);
    }
    const sortedCard = [...toCard].sort((a, b) => a - b);
    const sortedGroup = [...toGroup].sort((a, b) => a - b);
    const waiting = rings.map((ring) => ring.waitingCommands);
    return {
      burst: scenario.burst,
      ringingCalls: RINGS,
      historyCommandsWaitingAtRings: { first: waiting[0], last: waiting[waiting.length - 1] },
      ringToCardMs: {
        p50: percentile(sortedCard, 50),
        p95: percentile(sortedCard, 95),
        max: sortedCard.at(-1),
      },
      ringToGroupShownMs: {
        p50: percentile(sortedGroup, 50),
        p95: percentile(sortedGroup, 95),
        max: sortedGroup.at(-1),
      },
      portal503s: sandbox.stats().queryLimitExceeded,
    };
  } finally {
    bridge.child.kill('SIGKILL');
    await sandbox.close();
  }
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'bridge-card-'));
  const results: Record<string, unknown> = {};
  try {
    for (const scenario of SCENARIOS) {
      if (ONLY && !ONLY.includes(scenario.name)) continue;
      results[scenario.name] = await run(scenario, dir);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(JSON.stringify({ bench: 'ring-to-card', at: new Date().toISOString(), results }, null, 2));
}

void main().catch((error) => {
  console.error(error);
  process.exit(1);
});
