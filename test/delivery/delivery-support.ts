import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from '../support/bridge-process';
import { Harness, PBX_TOKEN } from '../support/bridge-harness';

/** What the delivery specs share: PBX posts, call status, and the bridge as a child from source. */

export async function postEvents(h: Harness, body: unknown): Promise<void> {
  const response = await h.http
    .post('/v1/calls/events')
    .set('Authorization', `Bearer ${PBX_TOKEN}`)
    .send(body as object);
  if (response.status !== 202) throw new Error(`intake answered ${response.status}: ${response.text}`);
}

export async function callStatus(h: Harness, callId: string) {
  const response = await h.http
    .get(`/v1/calls/${encodeURIComponent(callId)}`)
    .set('Authorization', `Bearer ${PBX_TOKEN}`);
  return response.body as {
    state: string;
    nextStep: string | null;
    lastError: string | null;
    attempts: number;
    recording: string;
  };
}

export interface SourceBridge {
  url: string;
  output(): string;
  stop(): Promise<void>;
}

/**
 * The bridge from its TypeScript sources as a child process (no build needed): a bridge whose event loop
 * stalls must not stall the test runner with it.
 */
export async function startSourceBridge(env: Record<string, string>): Promise<SourceBridge> {
  const port = await freePort();
  const root = join(__dirname, '..', '..');
  const child: ChildProcess = spawn(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', join(root, 'src', 'main.ts')],
    { cwd: root, env: { PATH: process.env.PATH ?? '', ...env, PORT: String(port) }, stdio: 'pipe' },
  );
  let log = '';
  child.stdout?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`bridge exited during start-up:\n${log}`);
    try {
      if ((await fetch(`${url}/health/live`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`bridge did not start within 60 s:\n${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    url,
    output: () => log,
    async stop() {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
