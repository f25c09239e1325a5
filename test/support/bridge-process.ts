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

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** `port`: one the caller chose (a multi-mode bridge's PUBLIC_URL names it); else a free one. */
export async function startBridgeProcess(env: Record<string, string>, port?: number): Promise<BridgeProcess> {
  port ??= await freePort();
  // In a temporary working directory: dist/main.js reads `.env` from there, and a developer's own `.env`
  // at the project root must not leak into these runs.
  const child = spawn(process.execPath, [join(__dirname, '..', '..', 'dist', 'main.js')], {
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
