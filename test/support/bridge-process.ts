import axios from 'axios';
import { ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The built bridge (dist/main.js) as a real child process, for crash, restart and shutdown tests. */
export interface BridgeProcess {
  url: string;
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Ports are handed out from a range of this worker's own, below the kernel's ephemeral range (32768 and
 * up on Linux): a port the kernel gives for `listen(0)` or an outgoing connection is never one of them,
 * and two spec files running at once (different Jest workers) never draw the same one, so a port is still
 * free when its caller binds it a moment (or a child process's start-up) later. Within a worker each call
 * gets the next port; one still bound (a child process of an earlier spec file not gone yet, another
 * program) is skipped. The walk starts at a random place in the range, so two test runs on one machine
 * (whose workers share ids) seldom walk the same ports either.
 */
const PORT_RANGE_START = 20_000;
const PORTS_PER_WORKER = 400;
/** Workers 1 to 31 have ranges of their own below 32 768 (id 0: outside Jest, as the benches run). */
const WORKER_RANGES = 31;
const workerSlot = Number(process.env.JEST_WORKER_ID ?? 0) % WORKER_RANGES;
const workerRangeStart = PORT_RANGE_START + workerSlot * PORTS_PER_WORKER;
let nextPortIndex = Math.floor(Math.random() * PORTS_PER_WORKER);

/** A port of this worker's range that nothing listens on now, for the caller to bind (or to find closed). */
export async function freePort(): Promise<number> {
  for (let tried = 0; tried < PORTS_PER_WORKER; tried += 1) {
    const port = workerRangeStart + (nextPortIndex % PORTS_PER_WORKER);
    nextPortIndex += 1;
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port in ${workerRangeStart}-${workerRangeStart + PORTS_PER_WORKER - 1}`);
}

/** Whether `port` can be listened on now on every address (one bound on any of them shows), then closed again. */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, () => server.close(() => resolve(true)));
  });
}

/** `port`: one the caller chose (a multi-mode bridge's PUBLIC_URL names it); else a free one. */
export async function startBridgeProcess(env: Record<string, string>, port?: number): Promise<BridgeProcess> {
  port ??= await freePort();
  // In a temporary working directory: dist/main.js reads `.env` from there, and a developer's own `.env`
  // at the project root must not leak into these runs. BRIDGE_DIST: another build (a bench comparing two).
  const dist = process.env.BRIDGE_DIST ?? join(__dirname, '..', '..', 'dist');
  const child = spawn(process.execPath, [join(dist, 'main.js')], {
    cwd: tmpdir(),
    env: { PATH: process.env.PATH ?? '', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  // 'close', not 'exit': it comes once the child's stdout and stderr are drained too, so `output()` holds
  // every line the process wrote before it died ('exit' can come first, with the last lines still in the pipe).
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`bridge exited during start-up:\n${log}`);
    try {
      const response = await fetch(`${url}/health/live`);
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`bridge did not start within 30 s:\n${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { url, child, output: () => log, exited };
}

/** Whether this replica holds the portal's delivery lease, from its readiness details. */
export async function deliveringHere(replica: BridgeProcess): Promise<boolean> {
  const { data } = await axios.get(`${replica.url}/health/ready`, { validateStatus: () => true });
  return data.details?.portal?.deliveringHere === true;
}
