/**
 * Idle portals (docs/decisions/tenancy.md): what BENCH_IDLE_PORTALS (default 10 000) installed portals cost
 * one replica (`B24_APP_MODE=multi`, the built bridge as a child process) on PostgreSQL when they are quiet,
 * and ring-to-card at that size under a steady load within capacity. Portals are installed straight into
 * the store (test/support/multi-fleet.ts), as bench/portals.bench.ts does, each one a tenant of one sandbox
 * process (this one).
 *
 * Figures: RSS per idle portal ((RSS with N − RSS with 0) / N, each read after settling and a forced GC:
 * the child runs with --expose-gc and a hook that collects on SIGWINCH, a signal Nest's shutdown hooks leave alone), the bridge's and PostgreSQL's CPU
 * over BENCH_IDLE_SECONDS with nothing to do, the statements a second they run meanwhile (transactions
 * committed in pg_stat_database, the bench's database only), then BENCH_STEADY_CALLS_PER_SEC calls a second
 * (each to the next portal: most of them their portal's first work since the start) for BENCH_SECONDS, a
 * sample of them timed from the 202 to the register reaching the portal. Prints one JSON document. Needs
 * PostgreSQL at TEST_POSTGRES_URL and a build (`npm run build`).
 */
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { SandboxPortal } from '../sandbox';
import { BridgeProcess } from '../test/support/bridge-process';
import {
  dropSchema,
  fleetDetails,
  fleetEnv,
  fleetToken,
  postgresBackends,
  seedPortals,
  startFleet,
  stopFleet,
} from '../test/support/multi-fleet';
import { TEST_POSTGRES_URL, TEST_SCHEMA_PREFIX } from '../test/support/test-database';
import { ended, postJson, started } from './bench-support';
import {
  cpuSeconds,
  databaseTransactions,
  figures,
  postgresCpuSeconds,
  rssMb,
  signalReplica,
} from './process-figures';

const PORTALS = Number(process.env.BENCH_IDLE_PORTALS ?? 10_000);
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 30);
const SETTLE_SECONDS = Number(process.env.BENCH_SETTLE_SECONDS ?? 20);
const STEADY_CALLS_PER_SEC = Number(process.env.BENCH_STEADY_CALLS_PER_SEC ?? 20);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
/** PORTAL_IDLE_SEC of the replica: how long a portal's services outlive its last work. */
const PORTAL_IDLE_SEC = Number(process.env.BENCH_PORTAL_IDLE_SEC ?? 10);
const RINGS = Number(process.env.BENCH_PORTAL_RINGS ?? 100);
/** How long the replica may take to serve every portal before the bench gives up (and says how many it served). */
const SERVE_TIMEOUT_MS = Number(process.env.BENCH_SERVE_TIMEOUT_SEC ?? 1200) * 1000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The backends of this database (the replica's pool, listener and liveness connections), not the bench's own. */
async function databaseBackends(): Promise<number[]> {
  const client = new Client({ connectionString: TEST_POSTGRES_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    );
    return rows.map((row) => row.pid);
  } finally {
    await client.end();
  }
}

/** CPU seconds of each of these backends still running (Linux /proc), by pid. */
function backendsCpuSeconds(pids: number[]): Map<number, number> {
  const seconds = new Map<number, number>();
  for (const pid of pids) {
    try {
      seconds.set(pid, cpuSeconds(pid));
    } catch {
      // the backend ended meanwhile
    }
  }
  return seconds;
}

/**
 * CPU the backends used between two reads, counting those still running at the second (one the pool closed
 * meanwhile was idle for the pool's idle timeout before it closed; its last seconds are not counted).
 */
function backendsCpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, seconds] of after) total += seconds - (before.get(pid) ?? seconds);
  return total;
}

/** The replica's RSS after a full GC (its hook collects on SIGWINCH). */
async function rssAfterGc(replica: BridgeProcess): Promise<number> {
  signalReplica(replica.child.pid, 'SIGWINCH');
  await sleep(1500);
  if (replica.child.exitCode !== null || replica.child.signalCode !== null) {
    throw new Error(`the bridge exited: ${replica.output().slice(-2000)}`);
  }
  return rssMb(replica.child.pid);
}

async function untilPortals(
  replica: BridgeProcess,
  portals: number,
  timeoutMs = SERVE_TIMEOUT_MS,
): Promise<number> {
  const begin = Date.now();
  for (;;) {
    const details = await fleetDetails(replica).catch(() => undefined);
    if (details?.portals === portals) return Date.now() - begin;
    if (Date.now() - begin > timeoutMs) {
      throw new Error(
        `portals not all served within ${timeoutMs} ms: ${details?.portals} served, ${details?.deliveringHere} delivered here`,
      );
    }
    await sleep(500);
  }
}

async function main(): Promise<void> {
  const schema = `${TEST_SCHEMA_PREFIX}bidle_${randomBytes(4).toString('hex')}`;
  const hook = join(tmpdir(), `bench-gc-${randomBytes(4).toString('hex')}.cjs`);
  writeFileSync(hook, "process.on('SIGWINCH', () => global.gc());\n");
  const sandbox = await SandboxPortal.start();
  const tenants = Array.from({ length: PORTALS }, (_, i) => sandbox.addPortal({ name: `i${i}` }));
  const env = fleetEnv(sandbox, schema, {
    PBX_RATE_LIMIT_RPS: '100000',
    LOG_LEVEL: 'error',
    NODE_OPTIONS: `--expose-gc --require ${hook}`,
    PORTAL_IDLE_SEC: String(PORTAL_IDLE_SEC),
  });
  let replicas: BridgeProcess[] = [];
  try {
    replicas = await startFleet(1, env);
    const [replica] = replicas;
    await sleep(SETTLE_SECONDS * 1000);
    const emptyRssMb = await rssAfterGc(replica);
    const seedBegin = Date.now();
    await seedPortals(schema, tenants);
    const seededInMs = Date.now() - seedBegin;
    const servedInMs = await untilPortals(replica, PORTALS);
    // Whatever the start does for each portal (reads, directories, bindings) settles, and the services
    // built for it are dropped once idle (the figure is what a quiet portal costs).
    const idleBegin0 = Date.now();
    let runtimesLeft = PORTALS;
    while (Date.now() - idleBegin0 < SERVE_TIMEOUT_MS) {
      runtimesLeft = (await fleetDetails(replica).catch(() => undefined))?.runtimes ?? runtimesLeft;
      if (runtimesLeft === 0) break;
      await sleep(1000);
    }
    const allIdleInMs = Date.now() - idleBegin0;
    await sleep(SETTLE_SECONDS * 1000);
    const fullRssMb = await rssAfterGc(replica);

    await sleep(1500);
    const deliveringAtIdle = (await fleetDetails(replica)).deliveringHere;
    const statementsBefore = await databaseTransactions();
    const bridgeBefore = cpuSeconds(replica.child.pid);
    const postgresBefore = postgresCpuSeconds();
    const backends = await databaseBackends();
    const backendsBefore = backendsCpuSeconds(backends);
    const idleBegin = Date.now();
    await sleep(IDLE_SECONDS * 1000);
    const idleSec = (Date.now() - idleBegin) / 1000;
    const bridgeIdle = cpuSeconds(replica.child.pid) - bridgeBefore;
    const postgresIdle = postgresCpuSeconds() - postgresBefore;
    const backendsIdle = backendsCpuBetween(backendsBefore, backendsCpuSeconds(backends));
    await sleep(1500);
    // The two reads of the statistics are two transactions of their own.
    const statementsIdle = (await databaseTransactions()) - statementsBefore - 1;
    // After the idle window too: what V8 gave back of the heap it grew while every runtime was built at once.
    const idleRssMb = await rssAfterGc(replica);

    // Steady load within capacity on idle portals: each call builds its portal's services (and takes its
    // lease) unless an earlier call of the same portal did within PORTAL_IDLE_SEC.
    const deliveringAtLoad = (await fleetDetails(replica).catch(() => undefined))?.deliveringHere ?? 0;
    // A call a portal, the next portal each time, some timed ring-to-card.
    const begin = Date.now();
    let sent = 0;
    let refused = 0;
    const refusals: Record<string, number> = {};
    const rings: number[] = [];
    const inFlight = new Set<Promise<void>>();
    const ringEvery = Math.max(1, Math.floor((STEADY_CALLS_PER_SEC * SECONDS) / RINGS));
    while (Date.now() - begin < SECONDS * 1000) {
      const due = Math.floor(((Date.now() - begin) / 1000) * STEADY_CALLS_PER_SEC);
      while (sent < due) {
        const n = sent++;
        const portal = (n * 7919) % PORTALS;
        const tenant = tenants[portal];
        const callId = `bi-${n}`;
        const ring = n % ringEvery === 0;
        const body = ring ? [started(callId, n)] : [started(callId, n), ended(callId)];
        const work = postJson(`${replica.url}/v1/calls/events`, body, fleetToken(portal)).then(
          async (status) => {
            if (status !== 202) {
              refused += 1;
              refusals[status] = (refusals[status] ?? 0) + 1;
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
    await Promise.all(inFlight);
    console.log(
      JSON.stringify(
        {
          portals: PORTALS,
          seededInMs,
          servedAllInMs: servedInMs,
          portalIdleSec: PORTAL_IDLE_SEC,
          allIdleInMs,
          runtimesLeftAtIdle: runtimesLeft,
          memory: {
            emptyBridgeRssMb: Math.round(emptyRssMb),
            bridgeRssMb: Math.round(fullRssMb),
            perIdlePortalKb: Number((((fullRssMb - emptyRssMb) * 1024) / PORTALS).toFixed(1)),
            bridgeRssMbAfterIdle: Math.round(idleRssMb),
            perIdlePortalKbAfterIdle: Number((((idleRssMb - emptyRssMb) * 1024) / PORTALS).toFixed(1)),
          },
          idle: {
            seconds: Number(idleSec.toFixed(1)),
            deliveringHere: deliveringAtIdle,
            bridgeCoresBusy: Number((bridgeIdle / idleSec).toFixed(3)),
            // The backends serving the bridge (the figure), then every PostgreSQL process of the machine
            // (its background writers and other databases' work included: an upper bound on a shared box).
            postgresCoresBusy: Number((backendsIdle / idleSec).toFixed(3)),
            postgresMachineCoresBusy: Number((postgresIdle / idleSec).toFixed(3)),
            statementsPerSec: Number((statementsIdle / idleSec).toFixed(1)),
          },
          steadyLoad: {
            callsPerSec: STEADY_CALLS_PER_SEC,
            deliveringHereAtStart: deliveringAtLoad,
            seconds: SECONDS,
            calls: sent,
            refused,
            refusals,
            ringToCard: figures(rings),
          },
          postgresBackends: await postgresBackends(),
        },
        null,
        2,
      ),
    );
  } finally {
    // Ten thousand runtimes may take long to close: the figures are taken, so it is killed after a minute.
    await Promise.race([stopFleet(replicas), sleep(60_000)]);
    for (const replica of replicas)
    // Not isAlive: that reads the SIGTERM sent as the end.
    {
      if (replica.child.exitCode === null && replica.child.signalCode === null) replica.child.kill('SIGKILL');
    }
    await sandbox.close();
    await dropSchema(schema);
    rmSync(hook, { force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
