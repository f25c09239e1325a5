/**
 * Many portals (docs/API.md): the built bridge in `B24_APP_MODE=multi` as 1 and then 3 child processes on
 * one PostgreSQL database, serving BENCH_PORTALS (default 1 000) portals of one sandbox process (this one),
 * each portal at its own budget (2 requests/s, burst 50). Portals are installed straight into the store
 * (test/support/multi-fleet.ts: the install path is tested in test/portals/), then every portal gets steady
 * traffic, calls a second in all (each call.started then call.ended, one PBX request), round-robin over the
 * portals and the replicas, for BENCH_SECONDS: BENCH_CALLS_PER_SEC (200, beyond what this machine delivers:
 * the capacity) and BENCH_STEADY_CALLS_PER_SEC (60, within it: ring-to-card on a normal day). A sample of ringing calls is timed from
 * the 202 to its register reaching its portal (ring-to-card). Then the failover rounds: BENCH_FAILOVER_RUNS
 * times, 3 fresh replicas with BENCH_FAILOVER_PORTALS portals under traffic, the replica delivering the most
 * portals killed with SIGKILL, and the time from the kill to each of its portals' next request.
 * Prints one JSON document. Needs PostgreSQL at TEST_POSTGRES_URL and a build (`npm run build`); BRIDGE_DIST
 * benches another build's dist/ (an older commit's, beside this one: docs/decisions/command-cost.md).
 *
 * What limits it (see the printed `cpu` figures): on this 2-core machine the bridge, PostgreSQL, the sandbox
 * and the load generator share two cores; each delivered call costs the bridge an intake transaction, two
 * batch requests (register, then finish: the portals are far below their ceilings, so batches are small)
 * with a shared-budget statement and a fenced write each, and the portal answers parsed. The per-portal
 * background (lease renewals every DELIVERY_LEASE_SEC/3, the idle look every 5 s, the directory refresh) is
 * what grows with the number of portals when they are quiet.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxPortal, SandboxTenant } from '../sandbox';
import { BridgeProcess } from '../test/support/bridge-process';
import {
  dropSchema,
  fleetDetails,
  fleetEnv,
  fleetToken,
  isAlive,
  portalsDeliveredBy,
  postgresBackends,
  seedPortals,
  startFleet,
  stopFleet,
} from '../test/support/multi-fleet';
import { TEST_SCHEMA_PREFIX } from '../test/support/test-database';
import { ended, postJson, started } from './bench-support';
import {
  countingStatementsEnv,
  cpuSeconds,
  databaseTransactions,
  figures,
  postgresCpuSeconds,
  readStatementCounts,
  rssMb,
  signalReplica,
  StatementCounts,
  statementsBetween,
} from './process-figures';

const PORTALS = Number(process.env.BENCH_PORTALS ?? 1000);
/** Above what this machine delivers: the figure is the bridge's capacity. */
const SATURATING_CALLS_PER_SEC = Number(process.env.BENCH_CALLS_PER_SEC ?? 200);
/** Within it: ring-to-card as portals see it on a normal day, not behind a backlog. */
const STEADY_CALLS_PER_SEC = Number(process.env.BENCH_STEADY_CALLS_PER_SEC ?? 60);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const RINGS = Number(process.env.BENCH_PORTAL_RINGS ?? 40);
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 10);
const FAILOVER_RUNS = Number(process.env.BENCH_FAILOVER_RUNS ?? 10);
const FAILOVER_PORTALS = Number(process.env.BENCH_FAILOVER_PORTALS ?? 30);
/** Which rounds run (all by default): saturating1, saturating3, steady1, steady3, failover. */
const ROUNDS = (process.env.BENCH_PORTALS_ROUNDS ?? 'saturating1,saturating3,steady1,steady3,failover').split(
  ',',
);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Until every replica serves every portal and they deliver all of them between them. */
async function untilServed(replicas: BridgeProcess[], portals: number, timeoutMs = 180_000): Promise<number> {
  const begin = Date.now();
  for (;;) {
    const details = await Promise.all(replicas.filter(isAlive).map(fleetDetails)).catch(() => []);
    const delivering = details.reduce((sum, detail) => sum + (detail?.deliveringHere ?? 0), 0);
    if (details.length && details.every((detail) => detail?.portals === portals) && delivering === portals) {
      return Date.now() - begin;
    }
    if (Date.now() - begin > timeoutMs) throw new Error(`portals not all served within ${timeoutMs} ms`);
    await sleep(500);
  }
}

/** Commands the portals accepted in batches within [from, to). */
function commandsBetween(tenants: SandboxTenant[], from: number, to: number): number {
  let commands = 0;
  for (const tenant of tenants) {
    for (const entry of tenant.requests()) {
      if (entry.method === 'batch' && entry.status === 200 && entry.at >= from && entry.at < to) {
        commands += entry.commands;
      }
    }
  }
  return commands;
}

async function loadRound(replicaCount: number, CALLS_PER_SEC: number) {
  const schema = `${TEST_SCHEMA_PREFIX}bportals_${randomBytes(4).toString('hex')}`;
  const sandbox = await SandboxPortal.start();
  const tenants = Array.from({ length: PORTALS }, (_, i) => sandbox.addPortal({ name: `b${i}` }));
  // Each replica counts the statements it sends (bench/count-statements.js): round trips per call.
  const statementsDir = mkdtempSync(join(tmpdir(), 'bench-statements-'));
  const env = fleetEnv(sandbox, schema, {
    PBX_RATE_LIMIT_RPS: '100000',
    LOG_LEVEL: 'error',
    // BENCH_POOL_SIZE: each replica's DATABASE_POOL_SIZE (the bridge's default, 10, if unset).
    ...(process.env.BENCH_POOL_SIZE ? { DATABASE_POOL_SIZE: process.env.BENCH_POOL_SIZE } : {}),
    ...countingStatementsEnv(statementsDir),
  });
  const replicas: BridgeProcess[] = [];
  const statementsNow = (): StatementCounts => {
    const all: StatementCounts = { total: 0, counts: {} };
    for (const replica of replicas) {
      const one = readStatementCounts(statementsDir, replica.child.pid);
      all.total += one.total;
      for (const [text, n] of Object.entries(one.counts)) all.counts[text] = (all.counts[text] ?? 0) + n;
    }
    return all;
  };
  try {
    // The process with no portal yet: its memory, to tell what the portals add.
    replicas.push(...(await startFleet(1, env)));
    await sleep(2000);
    const emptyRssMb = rssMb(replicas[0].child.pid);
    await seedPortals(schema, tenants);
    if (replicaCount > 1) replicas.push(...(await startFleet(replicaCount - 1, env)));
    const servedInMs = await untilServed(replicas, PORTALS);
    await sleep(3000); // the directories' first reads and the event bindings settle
    const rssAfterMb = replicas.map((replica) => rssMb(replica.child.pid));

    // Idle: what the portals cost with no call at all (lease renewals, idle looks, event polls, directories).
    const idleBefore = replicas.map((replica) => cpuSeconds(replica.child.pid));
    const idlePostgresBefore = postgresCpuSeconds();
    const idleXactsBefore = await databaseTransactions();
    await sleep(IDLE_SECONDS * 1000);
    const idleXacts = (await databaseTransactions()) - idleXactsBefore;
    const idle = {
      seconds: IDLE_SECONDS,
      bridgeCoresBusy: Number(
        (
          replicas.reduce((sum, replica, i) => sum + cpuSeconds(replica.child.pid) - idleBefore[i], 0) /
          IDLE_SECONDS
        ).toFixed(3),
      ),
      postgresCoresBusy: Number(((postgresCpuSeconds() - idlePostgresBefore) / IDLE_SECONDS).toFixed(3)),
      transactionsPerSec: Math.round(idleXacts / IDLE_SECONDS),
    };

    // Steady traffic: CALLS_PER_SEC a second, each to the next portal, via the next replica.
    const cpuBefore = replicas.map((replica) => cpuSeconds(replica.child.pid));
    const benchCpuBefore = process.cpuUsage();
    const postgresBefore = postgresCpuSeconds();
    const xactsBefore = await databaseTransactions();
    await sleep(600); // the preload's last write before the load
    const statementsBefore = statementsNow();
    // BENCH_CPU_PROFILE_DIR: the replicas' profiles cover the load and the drain (bench/count-statements.js).
    if (process.env.BENCH_CPU_PROFILE_DIR) {
      for (const replica of replicas) signalReplica(replica.child.pid, 'SIGWINCH');
    }
    const begin = Date.now();
    let sent = 0;
    let refused = 0;
    const rings: number[] = [];
    const inFlight = new Set<Promise<void>>();
    const ringEvery = Math.max(1, Math.floor((CALLS_PER_SEC * SECONDS) / RINGS));
    while (Date.now() - begin < SECONDS * 1000) {
      const due = Math.floor(((Date.now() - begin) / 1000) * CALLS_PER_SEC);
      while (sent < due) {
        const n = sent++;
        const portal = n % PORTALS;
        const tenant = tenants[portal];
        const replica = replicas[n % replicas.length];
        const callId = `bp-${n}`;
        const ring = n % ringEvery === 0;
        const body = ring ? [started(callId, n)] : [started(callId, n), ended(callId)];
        const work = postJson(`${replica.url}/v1/calls/events`, body, fleetToken(portal)).then(
          async (status) => {
            if (status !== 202) {
              refused += 1;
              return;
            }
            if (!ring) return;
            const posted = performance.now();
            while (tenant.calls({ EXTERNAL_CALL_ID: callId }).length === 0) {
              if (performance.now() - posted > 30_000) return;
              await sleep(5);
            }
            rings.push(performance.now() - posted);
            await postJson(`${replica.url}/v1/calls/events`, [ended(callId)], fleetToken(portal));
          },
        );
        inFlight.add(work);
        void work.finally(() => inFlight.delete(work));
      }
      await sleep(5);
    }
    const loadEnd = Date.now();
    const cpuDuring = replicas.map((replica, i) => cpuSeconds(replica.child.pid) - cpuBefore[i]);
    const postgresDuring = postgresCpuSeconds() - postgresBefore;
    const xactsDuring = (await databaseTransactions()) - xactsBefore;
    await Promise.all(inFlight);
    // Drain: until every call is finished on its portal (or a minute passes).
    const drainBegin = Date.now();
    for (;;) {
      const finished = tenants.reduce(
        (sum, tenant) => sum + tenant.calls().filter((call) => call.finished).length,
        0,
      );
      if (finished >= sent || Date.now() - drainBegin > 60_000) break;
      await sleep(250);
    }
    const drainedAt = Date.now();
    if (process.env.BENCH_CPU_PROFILE_DIR) {
      for (const replica of replicas) signalReplica(replica.child.pid, 'SIGWINCH');
    }
    await sleep(600); // the preload's write after the drain
    const statements = statementsBetween(statementsBefore, statementsNow(), 25);
    // Load and drain together: every call of the round delivered, whatever the backlog left for the drain.
    const wholeSec = (drainedAt - begin) / 1000;
    const bridgeCpuAll = replicas.reduce(
      (sum, replica, i) => sum + cpuSeconds(replica.child.pid) - cpuBefore[i],
      0,
    );
    const postgresCpuAll = postgresCpuSeconds() - postgresBefore;
    const xactsAll = (await databaseTransactions()) - xactsBefore;
    const benchCpu = process.cpuUsage(benchCpuBefore);
    const windowSec = (loadEnd - begin) / 1000;
    const delivered = commandsBetween(tenants, begin, loadEnd);
    const deliveredAll = commandsBetween(tenants, begin, drainedAt);
    const bridgeCpuSec = cpuDuring.reduce((sum, value) => sum + value, 0);
    const finished = tenants.reduce(
      (sum, tenant) => sum + tenant.calls().filter((call) => call.finished).length,
      0,
    );
    const portal503s = tenants.reduce((sum, tenant) => sum + (tenant.stats().byStatus['503'] ?? 0), 0);
    return {
      replicas: replicaCount,
      portals: PORTALS,
      servedAllInMs: servedInMs,
      idle,
      memory: {
        emptyBridgeRssMb: Math.round(emptyRssMb),
        rssMbPerReplica: rssAfterMb.map(Math.round),
        perPortalKb: Math.round(((rssAfterMb[0] - emptyRssMb) * 1024) / PORTALS),
      },
      offered: {
        callsPerSec: CALLS_PER_SEC,
        commandsPerSec: CALLS_PER_SEC * 2,
        seconds: SECONDS,
        calls: sent,
        refused,
      },
      delivered: {
        commandsPerSecDuringLoad: Math.round(delivered / windowSec),
        ratioOfOffered: Number((delivered / windowSec / (CALLS_PER_SEC * 2)).toFixed(3)),
        commandsPerSecPerCore: Math.round(delivered / windowSec / cpus().length),
        // Per core the bridge itself was busy (its CPU seconds over the load), the "per core of bridge".
        commandsPerBridgeCoreSec: Math.round(delivered / Math.max(0.001, bridgeCpuSec)),
        drainAfterLoadSec: Number(((drainedAt - loadEnd) / 1000).toFixed(1)),
        commandsInAll: deliveredAll,
        callsFinished: finished,
        ceilingCommandsPerSec: PORTALS * 2 * 50,
        portal503s,
      },
      ringToCard: figures(rings),
      cpu: {
        bridgeCoresBusy: Number((bridgeCpuSec / windowSec).toFixed(2)),
        perReplicaCoresBusy: cpuDuring.map((value) => Number((value / windowSec).toFixed(2))),
        postgresCoresBusy: Number((postgresDuring / windowSec).toFixed(2)),
        bridgeCpuMsPerDeliveredCommand: Number(((bridgeCpuSec * 1000) / Math.max(1, delivered)).toFixed(2)),
        postgresCpuMsPerDeliveredCommand: Number(
          ((postgresDuring * 1000) / Math.max(1, delivered)).toFixed(2),
        ),
        sandboxAndLoadCoresBusy: Number(
          ((benchCpu.user + benchCpu.system) / 1e6 / ((drainedAt - begin) / 1000)).toFixed(2),
        ),
      },
      database: {
        transactionsPerSecDuringLoad: Math.round(xactsDuring / windowSec),
        // Intake's transactions included (one per PBX request here, two commands per call).
        transactionsPerDeliveredCommand: Number((xactsDuring / Math.max(1, delivered)).toFixed(2)),
      },
      // Load and drain, every command of the round, and the same less the idle cost (measured above) over
      // that time: what delivering costs, not the background of the quiet portals.
      wholeRound: {
        seconds: Number(wholeSec.toFixed(1)),
        commands: deliveredAll,
        commandsPerSec: Math.round(deliveredAll / wholeSec),
        bridgeCpuMsPerCommand: Number(((bridgeCpuAll * 1000) / Math.max(1, deliveredAll)).toFixed(2)),
        postgresCpuMsPerCommand: Number(((postgresCpuAll * 1000) / Math.max(1, deliveredAll)).toFixed(2)),
        transactionsPerCommand: Number((xactsAll / Math.max(1, deliveredAll)).toFixed(2)),
        lessIdle: {
          bridgeCpuMsPerCommand: Number(
            (((bridgeCpuAll - idle.bridgeCoresBusy * wholeSec) * 1000) / Math.max(1, deliveredAll)).toFixed(
              2,
            ),
          ),
          postgresCpuMsPerCommand: Number(
            (
              ((postgresCpuAll - idle.postgresCoresBusy * wholeSec) * 1000) /
              Math.max(1, deliveredAll)
            ).toFixed(2),
          ),
          transactionsPerCommand: Number(
            ((xactsAll - idle.transactionsPerSec * wholeSec) / Math.max(1, deliveredAll)).toFixed(2),
          ),
        },
      },
      // Load and drain, as wholeRound: what the replicas sent PostgreSQL, per command and by statement.
      statements: {
        total: statements.total,
        perCommand: Number((statements.total / Math.max(1, deliveredAll)).toFixed(2)),
        perPbxRequest: Number((statements.total / Math.max(1, sent)).toFixed(2)),
        top: Object.fromEntries(statements.top),
      },
      postgresBackends: await postgresBackends(),
    };
  } finally {
    await stopFleet(replicas);
    await sandbox.close();
    await dropSchema(schema);
  }
}

/** One failover: 3 replicas, traffic to every portal, kill -9 the busiest, time to each of its portals' next request. */
async function failoverRun(): Promise<{ gapsMs: number[]; takeoverMs: number }> {
  const schema = `${TEST_SCHEMA_PREFIX}bfail_${randomBytes(4).toString('hex')}`;
  const sandbox = await SandboxPortal.start();
  const tenants = Array.from({ length: FAILOVER_PORTALS }, (_, i) => sandbox.addPortal({ name: `f${i}` }));
  const env = fleetEnv(sandbox, schema, { PBX_RATE_LIMIT_RPS: '100000', LOG_LEVEL: 'error' });
  let replicas: BridgeProcess[] = [];
  try {
    await seedPortals(schema, tenants);
    replicas = await startFleet(3, env);
    await untilServed(replicas, FAILOVER_PORTALS);
    const counts = (await Promise.all(replicas.map(fleetDetails))).map((detail) => detail.deliveringHere);
    const victim = replicas[counts.indexOf(Math.max(...counts))];
    const victimPortals = await portalsDeliveredBy(victim, tenants);
    // Traffic: every portal a call every 200 ms, so each has a request to make whenever it is delivered.
    let n = 0;
    let running = true;
    const traffic = (async () => {
      while (running) {
        const alive = replicas.filter(isAlive);
        await Promise.all(
          tenants.map((_, portal) => {
            const callId = `bf-${n++}`;
            return postJson(
              `${alive[n % alive.length].url}/v1/calls/events`,
              [started(callId, n), ended(callId)],
              fleetToken(portal),
            ).catch(() => 0);
          }),
        );
        await sleep(200);
      }
    })();
    await sleep(2000);
    victim.child.kill('SIGKILL');
    const killedAt = Date.now();
    await victim.exited;
    let takeoverMs = NaN;
    const survivors = replicas.filter(isAlive);
    for (;;) {
      const held = (await Promise.all(survivors.map(fleetDetails))).reduce(
        (sum, d) => sum + d.deliveringHere,
        0,
      );
      if (held === FAILOVER_PORTALS) {
        takeoverMs = Date.now() - killedAt;
        break;
      }
      if (Date.now() - killedAt > 30_000) break;
      await sleep(20);
    }
    await sleep(3000);
    running = false;
    await traffic;
    const gapsMs = victimPortals.map((memberId) => {
      const first = sandbox
        .portal(memberId)
        ?.requests()
        .find((entry) => entry.at > killedAt);
      return first ? first.at - killedAt : 30_000;
    });
    return { gapsMs, takeoverMs };
  } finally {
    await stopFleet(replicas);
    await sandbox.close();
    await dropSchema(schema);
  }
}

type Round = Awaited<ReturnType<typeof loadRound>>;

async function main(): Promise<void> {
  const round = (name: string, replicas: number, callsPerSec: number): Promise<Round | undefined> =>
    ROUNDS.includes(name) ? loadRound(replicas, callsPerSec) : Promise.resolve(undefined);
  const one = await round('saturating1', 1, SATURATING_CALLS_PER_SEC);
  const three = await round('saturating3', 3, SATURATING_CALLS_PER_SEC);
  const oneSteady = await round('steady1', 1, STEADY_CALLS_PER_SEC);
  const threeSteady = await round('steady3', 3, STEADY_CALLS_PER_SEC);
  const steady = (round: Round | undefined) =>
    round && {
      offered: round.offered,
      delivered: round.delivered,
      ringToCard: round.ringToCard,
      cpu: round.cpu,
      database: round.database,
      wholeRound: round.wholeRound,
      statements: round.statements,
    };
  const runs: { gapsMs: number[]; takeoverMs: number }[] = [];
  if (ROUNDS.includes('failover')) for (let i = 0; i < FAILOVER_RUNS; i++) runs.push(await failoverRun());
  const allGaps = runs.flatMap((run) => run.gapsMs);
  console.log(
    JSON.stringify(
      {
        machine: { cores: cpus().length },
        oneReplica: one,
        threeReplicas: three,
        steadyLoad: { oneReplica: steady(oneSteady), threeReplicas: steady(threeSteady) },
        scaling: one &&
          three && {
            commandsPerSec3over1: Number(
              (
                three.delivered.commandsPerSecDuringLoad / Math.max(1, one.delivered.commandsPerSecDuringLoad)
              ).toFixed(2),
            ),
            linearWouldBe: 3,
            note: 'three replicas share the same two cores with PostgreSQL, the sandbox and the load generator',
          },
        failover: runs.length > 0 && {
          runs: runs.length,
          portalsPerRun: FAILOVER_PORTALS,
          killToNextRequest: figures(allGaps),
          perRunMaxMs: runs.map((run) => Math.max(...run.gapsMs)),
          takeoverMs: figures(runs.map((run) => run.takeoverMs)),
        },
      },
      null,
      2,
    ),
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
