import { join } from 'node:path';

/** The sandbox portal as the bridge sees it in sandbox mode: where it listens, and how to stop it. */
export interface RunningSandbox {
  /** Base URL without trailing slash, e.g. http://127.0.0.1:8099. */
  url: string;
  /** The full-rights webhook the bridge delivers to in sandbox mode. */
  webhookUrl: string;
  close(): Promise<void>;
}

/** What the bridge uses of the sandbox's entry point (sandbox/index.ts). */
interface SandboxEntry {
  SandboxPortal: { start(options: { port: number }): Promise<RunningSandbox> };
}

/**
 * Where the sandbox's entry point is. Built: dist/sandbox/index.js beside dist/main.js. From TypeScript
 * sources (ts-node, Jest), this file is src/sandbox-mode.ts and the sources are in sandbox/ beside src/.
 */
export function sandboxEntryPath(): string {
  return __filename.endsWith('.ts') ? join(__dirname, '..', 'sandbox') : join(__dirname, 'sandbox');
}

/**
 * Starts the sandbox portal (a stand-in for the vendor's server, built apart in sandbox/) on `port`, 0 for
 * a free one. The product never imports the sandbox: it is loaded here at run time, and only in sandbox
 * mode, so a production start loads none of its code.
 */
export async function startSandboxPortal(port: number): Promise<RunningSandbox> {
  const entry = sandboxEntryPath();
  let sandbox: SandboxEntry;
  try {
    sandbox = (await import(entry)) as SandboxEntry;
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND';
    // Only the entry point itself missing means "not built"; a module missing inside it is its own error.
    if (!missing || !(error as Error).message.includes(entry)) throw error;
    throw new Error(`the sandbox portal is not built (${entry}): run npm run build`);
  }
  return sandbox.SandboxPortal.start({ port });
}
