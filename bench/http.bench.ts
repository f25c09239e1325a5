/**
 * `npm run bench` (first part): how lean the bridge's request path is, against the smallest Nest app on the
 * same adapter measured in the same run. Each server is a child process; this process is the load
 * generator (keep-alive, fixed concurrency). Prints requests/s of
 *  - the minimal Nest app's `GET /ping` (bench/minimal-nest-app.ts),
 *  - the bridge's `GET /health/live`,
 *  - the intake floor (bench/intake-floor-app.ts): the same single-event posts to the least a Nest app on the
 *    bridge's packages does with them (token, class-validator, one durable SQLite INSERT),
 *  - the bridge's single-event intake `POST /v1/calls/events` (one event per request, unique call ids,
 *    SQLite in a temporary folder; delivery runs to a sandbox portal in this process, as a real portal is
 *    elsewhere; HTTP_BENCH_PORTAL=in-process puts it in the bridge, its sandbox mode, as before),
 * and the ratios of the last three to the first, and of the bridge's intake to the floor; with each, the
 * server's CPU per request (user + system time of its process over the measured seconds, from /proc), which
 * a busy machine disturbs less than the rates.
 * BRIDGE_DIST benches another build (e.g. an older commit's dist/); HTTP_BENCH_SECONDS, HTTP_BENCH_CONCURRENCY
 * change the run; HTTP_BENCH_PROFILE=DIR writes the bridge's CPU profiles (node --cpu-prof) there, and
 * HTTP_BENCH_ONLY=live or =intake measures the bridge on that route alone (for a profile of one path).
 */
import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SandboxPortal } from '../sandbox';
import { postJson, started, untilAnswering } from './bench-support';

const SECONDS = Number(process.env.HTTP_BENCH_SECONDS ?? 5);
const CONCURRENCY = Number(process.env.HTTP_BENCH_CONCURRENCY ?? 32);
const DIST = resolve(process.env.BRIDGE_DIST ?? join(__dirname, '..', 'dist'));
const PROFILE_DIR = process.env.HTTP_BENCH_PROFILE;
const ONLY = process.env.HTTP_BENCH_ONLY;
const PORTAL_IN_PROCESS = process.env.HTTP_BENCH_PORTAL === 'in-process';
const TOKEN = 'bench-token-http';
const agent = new Agent({ keepAlive: true, maxSockets: 256 });

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => done(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

function get(url: string): Promise<number> {
  return new Promise((done, fail) => {
    const request = httpRequest(url, { agent }, (response) => {
      response.resume();
      response.on('end', () => done(response.statusCode ?? 0));
    });
    request.on('error', fail);
    request.end();
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((done) => child.once('exit', done));
  child.kill('SIGTERM');
  await exited;
}

/** CPU time (user + system, ms) the process has used so far; NaN where /proc is not there. */
function cpuMs(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // clock ticks of 10 ms
  } catch {
    return NaN;
  }
}

interface Measured {
  rps: number;
  /** The server's CPU per request over the measured seconds, in µs. */
  cpuUsPerRequest: number;
}

/** Requests/s of `send` at CONCURRENCY after a warm-up; any answer other than `ok` fails the bench. */
async function measure(send: (n: number) => Promise<number>, ok: number, pid?: number): Promise<Measured> {
  let n = 0;
  const round = async (ms: number) => {
    const until = performance.now() + ms;
    let done = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (performance.now() < until) {
          const status = await send(n++);
          if (status !== ok) throw new Error(`answer ${status}, expected ${ok}`);
          done += 1;
        }
      }),
    );
    return done;
  };
  await round(2000);
  const begin = performance.now();
  const cpuBefore = cpuMs(pid);
  const done = await round(SECONDS * 1000);
  const cpu = cpuMs(pid) - cpuBefore;
  return {
    rps: Math.round(done / ((performance.now() - begin) / 1000)),
    cpuUsPerRequest: Math.round((cpu * 1000) / done),
  };
}

/** A bench app (bench/<file>, run by ts-node) as a child process on a free port, with `env` besides. */
async function benchApp(file: string, env: Record<string, string> = {}) {
  const port = await freePort();
  const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', join(__dirname, file)], {
    cwd: join(__dirname, '..'),
    env: { PATH: process.env.PATH ?? '', PORT: String(port), ...env },
    stdio: 'ignore',
  });
  return { child, url: `http://127.0.0.1:${port}` };
}

async function minimalApp(): Promise<Measured> {
  const { child, url } = await benchApp('minimal-nest-app.ts');
  try {
    await untilAnswering(`${url}/ping`, child, 'the minimal app', (status) => status === 200);
    return await measure(() => get(`${url}/ping`), 200, child.pid);
  } finally {
    await stop(child);
  }
}

/** The intake floor (bench/intake-floor-app.ts): single-event intake at its least on the same packages. */
async function intakeFloor(dir: string): Promise<Measured> {
  const { child, url: base } = await benchApp('intake-floor-app.ts', {
    FLOOR_TOKEN: TOKEN,
    FLOOR_DB: join(dir, 'floor.sqlite'),
  });
  const url = `${base}/v1/calls/events`;
  try {
    await untilAnswering(url, child, 'the intake floor', (status) => status < 500);
    const run = Date.now();
    return await measure((n) => postJson(url, started(`floor-${run}-${n}`, n), TOKEN), 202, child.pid);
  } finally {
    await stop(child);
  }
}

async function bridge(dir: string): Promise<{ live?: Measured; intake?: Measured }> {
  const port = await freePort();
  const profile = PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : [];
  // The portal the bridge delivers to: in this process (as a real portal is elsewhere), or, with
  // HTTP_BENCH_PORTAL=in-process, the bridge's own sandbox mode, whose portal work counts in its CPU.
  const sandbox = PORTAL_IN_PROCESS ? undefined : await SandboxPortal.start({});
  const portal = sandbox ? { B24_WEBHOOK_URL: sandbox.webhookUrl } : { SANDBOX: '1', SANDBOX_PORT: '0' };
  const child = spawn(process.execPath, [...profile, join(DIST, 'main.js')], {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'development',
      ...portal,
      PORT: String(port),
      PBX_TOKENS: TOKEN,
      PBX_RATE_LIMIT_RPS: '1000000',
      DATABASE_URL: `sqlite:${join(dir, 'bridge.sqlite')}`,
    },
    stdio: 'ignore',
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await untilAnswering(`${url}/health/live`, child, 'the bridge', (status) => status === 200);
    const live =
      ONLY === 'intake' ? undefined : await measure(() => get(`${url}/health/live`), 200, child.pid);
    const run = Date.now();
    const intake =
      ONLY === 'live'
        ? undefined
        : await measure(
            (n) => postJson(`${url}/v1/calls/events`, started(`http-${run}-${n}`, n), TOKEN),
            202,
            child.pid,
          );
    return { live, intake };
  } finally {
    await stop(child);
    await sandbox?.close();
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bridge-http-bench-'));
  try {
    const minimal = await minimalApp();
    const floor = ONLY === 'live' ? undefined : await intakeFloor(dir);
    const { live, intake } = await bridge(dir);
    console.log(
      JSON.stringify(
        {
          httpPath: {
            bridge: DIST,
            concurrency: CONCURRENCY,
            seconds: SECONDS,
            portal: PORTAL_IN_PROCESS ? 'in the bridge (sandbox mode)' : 'in the load generator',
            minimalNestRps: minimal.rps,
            intakeFloorRps: floor?.rps ?? null,
            healthLiveRps: live?.rps ?? null,
            intakeSingleEventRps: intake?.rps ?? null,
            healthLiveRatio: live ? Number((live.rps / minimal.rps).toFixed(2)) : null,
            intakeRatio: intake ? Number((intake.rps / minimal.rps).toFixed(2)) : null,
            intakeFloorRatio: floor ? Number((floor.rps / minimal.rps).toFixed(2)) : null,
            intakeToFloor: intake && floor ? Number((intake.rps / floor.rps).toFixed(2)) : null,
            cpuUsPerRequest: {
              minimalNest: minimal.cpuUsPerRequest,
              healthLive: live?.cpuUsPerRequest ?? null,
              intakeFloor: floor?.cpuUsPerRequest ?? null,
              intakeSingleEvent: intake?.cpuUsPerRequest ?? null,
            },
          },
        },
        null,
        2,
      ),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
