/**
 * Several replicas (issue 7): the built bridge as 1 and then 3 child processes on one PostgreSQL database
 * (a fresh schema each round), the sandbox portal at its default budget (2 requests/s, burst 50) in this
 * process. Each round posts BENCH_REPLICA_CALLS calls (10 events a request, round-robin over the replicas)
 * and waits until the portal has all of them finished. Prints one JSON document: intake events/s and the
 * delivery ratio (commands/s against the 2 × 50 ceiling) for each round, and 3 replicas against 1.
 * Needs PostgreSQL at TEST_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/test).
 */
import axios from 'axios';
import { randomBytes } from 'node:crypto';
import { cpus } from 'node:os';
import { Client } from 'pg';
import { SandboxPortal } from '../sandbox';
import { BridgeProcess, deliveringHere, startBridgeProcess } from '../test/support/bridge-process';
import { postgresUrlForSchema, TEST_POSTGRES_URL, TEST_SCHEMA_PREFIX } from '../test/support/test-database';
import { deliveryFigures, ended, percentile, postJson, started } from './bench-support';

const CALLS = Number(process.env.BENCH_REPLICA_CALLS ?? 2500);
/** Ringing calls posted one at a time to each replica, before the load, to time the call card. */
const RINGS = Number(process.env.BENCH_RINGS ?? 20);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const TOKEN = 'bench-token';

/**
 * The call card: ms from a ringing call's `call.started` answered 202 until its register reaches the
 * portal, with the portal idle, for calls posted to the replica holding the delivery lease and to the others.
 */
async function ringToCard(sandbox: SandboxPortal, replicas: BridgeProcess[]) {
  for (;;) {
    if ((await Promise.all(replicas.map(deliveringHere))).some(Boolean)) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const holding = await Promise.all(replicas.map(deliveringHere));
  const times: { holder: number[]; others: number[] } = { holder: [], others: [] };
  for (let n = 0; n < RINGS * replicas.length; n++) {
    const index = n % replicas.length;
    const callId = `ring-${n}`;
    if ((await postJson(`${replicas[index].url}/v1/calls/events`, started(callId, n), TOKEN)) !== 202) {
      throw new Error(`ringing call ${callId} was refused`);
    }
    const posted = performance.now();
    while (sandbox.calls({ EXTERNAL_CALL_ID: callId }).length === 0) {
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    times[holding[index] ? 'holder' : 'others'].push(performance.now() - posted);
    // Idle between rings, as calls arrive in an office; also lets the holder go back to sleep.
    await new Promise((resolve) => setTimeout(resolve, 300 + Math.random() * 700));
  }
  const figures = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return {
      calls: sorted.length,
      p50Ms: Number(percentile(sorted, 50).toFixed(1)),
      p95Ms: Number(percentile(sorted, 95).toFixed(1)),
      maxMs: Number(sorted[sorted.length - 1].toFixed(1)),
    };
  };
  return { viaDeliveringReplica: figures(times.holder), viaOtherReplicas: figures(times.others) };
}

async function round(replicaCount: number) {
  const schema = `${TEST_SCHEMA_PREFIX}bench_${randomBytes(4).toString('hex')}`;
  const sandbox = await SandboxPortal.start({ requestLogLimit: 100_000 });
  const replicas: BridgeProcess[] = [];
  try {
    for (let i = 0; i < replicaCount; i++) {
      replicas.push(
        await startBridgeProcess({
          NODE_ENV: 'development', // production refuses the sandbox's http URL and short tokens
          PBX_TOKENS: TOKEN,
          B24_WEBHOOK_URL: sandbox.webhookUrl,
          DATABASE_URL: postgresUrlForSchema(schema),
          B24_DEFAULT_USER_ID: '1',
          PBX_RATE_LIMIT_RPS: '100000',
          LOG_LEVEL: 'warn',
        }),
      );
    }
    const card = replicaCount > 1 && RINGS > 0 ? await ringToCard(sandbox, replicas) : undefined;
    const bodies = Array.from({ length: CALLS / 5 }, (_, b) =>
      Array.from({ length: 5 }, (_, i) => {
        const n = b * 5 + i;
        return [started(`r-${n}`, n), ended(`r-${n}`)];
      }).flat(),
    );
    const begin = Date.now();
    let next = 0;
    let rejected = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < bodies.length) {
          const index = next++;
          const replica = replicas[index % replicas.length];
          if ((await postJson(`${replica.url}/v1/calls/events`, bodies[index], TOKEN)) !== 202) rejected += 1;
        }
      }),
    );
    const intakeSeconds = (Date.now() - begin) / 1000;
    for (;;) {
      const { data } = await axios.get(`${sandbox.url}/_sandbox/calls`);
      const calls: { finished: unknown }[] = Array.isArray(data) ? data : data.calls;
      if (calls.filter((call) => call.finished).length >= CALLS) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const seconds = (Date.now() - begin) / 1000;
    const stats = (await axios.get(`${sandbox.url}/_sandbox/stats`)).data;
    const { data } = await axios.get(`${sandbox.url}/_sandbox/requests`);
    const log: { at: number; commands: number; method: string }[] = Array.isArray(data)
      ? data
      : data.requests;
    // The delivery of the load only: the ringing calls before it are timed on their own.
    const batches = log.filter((entry) => entry.method === 'batch' && entry.at >= begin);
    return {
      replicas: replicaCount,
      calls: CALLS,
      intake: {
        eventsPerRequest: 10,
        concurrency: CONCURRENCY,
        eventsPerSec: Math.round((2 * CALLS) / intakeSeconds),
        rejected,
      },
      delivery: deliveryFigures(batches, { ...stats, requests: batches.length }, seconds),
      ringToCard: card,
    };
  } finally {
    for (const replica of replicas) {
      replica.child.kill('SIGKILL');
      await replica.exited;
    }
    await sandbox.close();
    const client = new Client({ connectionString: TEST_POSTGRES_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${client.escapeIdentifier(schema)} CASCADE`);
    await client.end();
  }
}

async function main() {
  const one = await round(1);
  const three = await round(3);
  console.log(
    JSON.stringify(
      {
        machine: { cpus: cpus().length, node: process.version },
        store: 'postgresql',
        one,
        three,
        threeAgainstOne: {
          sustainedDeliveryRatio: Number(
            (three.delivery.sustainedRatioOfCeiling / one.delivery.sustainedRatioOfCeiling).toFixed(3),
          ),
          intakeRatio: Number((three.intake.eventsPerSec / one.intake.eventsPerSec).toFixed(3)),
        },
      },
      null,
      2,
    ),
  );
  process.exit(0);
}

void main();
