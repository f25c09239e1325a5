/**
 * The floor under the bridge's CPU per command (docs/decisions/figures.md, "The floor"): what the least a
 * Node service can do for the same traffic costs on this machine, measured like bench/portals.bench.ts
 * measures the bridge. The service (bench/floor-service.js, a child process) stores each PBX request in one
 * durable INSERT, answers 202, then sends each event as one command in its own HTTP request, marked before
 * and after (5 statements, 1 PBX request and 2 portal requests a call). The portal is a bare HTTP sink in this
 * process. Rounds: steady (BENCH_STEADY_CALLS_PER_SEC, 60, as the portals bench's steady round) and
 * saturating (BENCH_FLOOR_CONCURRENCY PBX requests in flight, 32), each BENCH_SECONDS (20) then drained.
 * Prints, per round, the service's and PostgreSQL's CPU per delivered command and the commands per second
 * one core of the service delivers. Needs PostgreSQL at TEST_POSTGRES_URL.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Client } from 'pg';
import { freePort } from '../test/support/bridge-process';
import { TEST_POSTGRES_URL } from '../test/support/test-database';
import { ended, postJson, started, untilAnswering } from './bench-support';
import { cpuSeconds, postgresCpuSeconds } from './process-figures';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const STEADY_CALLS_PER_SEC = Number(process.env.BENCH_STEADY_CALLS_PER_SEC ?? 60);
const CONCURRENCY = Number(process.env.BENCH_FLOOR_CONCURRENCY ?? 32);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function database<T>(work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: TEST_POSTGRES_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** The portal: answers every command at once, and counts them. */
async function startSink(): Promise<{ server: Server; url: string; received: () => number }> {
  let received = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      received += 1;
      response.writeHead(200, { 'Content-Type': 'application/json' }).end('{"result":{"CALL_ID":"x"}}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}`, received: () => received };
}

async function round(
  name: 'steady' | 'saturating',
  url: string,
  child: ChildProcess,
  received: () => number,
) {
  const receivedBefore = received();
  const cpuBefore = cpuSeconds(child.pid);
  const postgresBefore = postgresCpuSeconds();
  const begin = Date.now();
  let calls = 0;
  let refused = 0;
  const post = async () => {
    const callId = `fl-${name}-${calls}`;
    const n = calls++;
    if ((await postJson(`${url}/v1/calls/events`, [started(callId, n), ended(callId)], 'floor')) !== 202) {
      refused += 1;
    }
  };
  if (name === 'steady') {
    const inFlight = new Set<Promise<void>>();
    while (Date.now() - begin < SECONDS * 1000) {
      const due = Math.floor(((Date.now() - begin) / 1000) * STEADY_CALLS_PER_SEC);
      while (calls < due) {
        const work: Promise<void> = post().finally(() => inFlight.delete(work));
        inFlight.add(work);
      }
      await sleep(5);
    }
    await Promise.all(inFlight);
  } else {
    const worker = async () => {
      while (Date.now() - begin < SECONDS * 1000) await post();
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  }
  const loadSec = (Date.now() - begin) / 1000;
  const expected = receivedBefore + (calls - refused) * 2;
  const drainBegin = Date.now();
  while (received() < expected && Date.now() - drainBegin < 60_000) await sleep(50);
  const commands = received() - receivedBefore;
  const wallSec = (Date.now() - begin) / 1000;
  const cpu = cpuSeconds(child.pid) - cpuBefore;
  const postgres = postgresCpuSeconds() - postgresBefore;
  return {
    calls,
    refused,
    commands,
    offeredCommandsPerSec: Number(((calls * 2) / loadSec).toFixed(1)),
    deliveredCommandsPerSec: Number((commands / wallSec).toFixed(1)),
    serviceCoresBusy: Number((cpu / wallSec).toFixed(3)),
    serviceCpuMsPerCommand: Number(((cpu * 1000) / commands).toFixed(3)),
    postgresCpuMsPerCommand: Number(((postgres * 1000) / commands).toFixed(3)),
    commandsPerServiceCoreSec: Math.round(commands / cpu),
  };
}

async function main(): Promise<void> {
  const table = `floor_${randomBytes(4).toString('hex')}`;
  await database((client) =>
    client.query(
      `CREATE TABLE ${table} (id BIGSERIAL PRIMARY KEY, event JSONB NOT NULL, state TEXT NOT NULL DEFAULT 'new', answer JSONB)`,
    ),
  );
  const sink = await startSink();
  const port = await freePort();
  const child = spawn(process.execPath, [join(__dirname, 'floor-service.js')], {
    env: {
      PATH: process.env.PATH ?? '',
      PORT: String(port),
      FLOOR_TABLE: table,
      FLOOR_DATABASE_URL: TEST_POSTGRES_URL,
      FLOOR_PORTAL_URL: sink.url,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    // Any answer will do: the floor answers every route, a GET with a 400.
    await untilAnswering(url, child, 'the floor service', () => true);
    // Warm-up: the service's code compiled and its pool open before anything is counted.
    const warm = Date.now();
    for (let n = 0; Date.now() - warm < 2000; n++) {
      await postJson(`${url}/v1/calls/events`, [started(`fl-warm-${n}`, n), ended(`fl-warm-${n}`)], 'floor');
    }
    await sleep(1000);
    const steady = await round('steady', url, child, sink.received);
    const saturating = await round('saturating', url, child, sink.received);
    console.log(
      JSON.stringify(
        {
          floor: {
            what: '1 PBX request (2 events, one durable INSERT), 2 portal requests and 4 UPDATEs a call',
            seconds: SECONDS,
            steady,
            saturating: { concurrency: CONCURRENCY, ...saturating },
          },
        },
        null,
        2,
      ),
    );
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await Promise.race([exited, sleep(5000)]);
    sink.server.close();
    await database((client) => client.query(`DROP TABLE IF EXISTS ${table}`));
  }
}

main().catch((error: Error) => {
  console.error(error);
  process.exit(1);
});
