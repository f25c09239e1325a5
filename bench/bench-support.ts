import { readFileSync } from 'node:fs';
/** What the benchmarks share: a lean keep-alive POST, call events, percentiles and the delivery ratio. */
import { ChildProcess, spawn } from 'node:child_process';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '../test/support/bridge-process';

/** The built bridge benched: this checkout's dist/, or another build's (BRIDGE_DIST) to compare. */
export const DIST = resolve(process.env.BRIDGE_DIST ?? join(__dirname, '..', 'dist'));

/** The built bridge as a child process with `env` (and `port`, else a free one), once it answers /health/live. */
export async function startBuiltBridge(
  env: Record<string, string>,
  port?: number,
): Promise<{ url: string; child: ChildProcess }> {
  port ??= await freePort();
  const child = spawn(process.execPath, [join(DIST, 'main.js')], {
    cwd: tmpdir(),
    env: { PATH: process.env.PATH ?? '', ...env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  await untilAnswering(`${url}/health/live`, child, 'the bridge');
  return { url, child };
}

/**
 * Waits until `url` answers with a status `accepted` takes (a 2xx unless told) within 30 s. Throws if `child`,
 * the server behind it, exits first.
 */
export async function untilAnswering(
  url: string,
  child: ChildProcess,
  name: string,
  accepted: (status: number) => boolean = (status) => status >= 200 && status < 300,
): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited during start-up`);
    try {
      const response = await fetch(url);
      if (accepted(response.status)) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${name} did not start within 30 s`);
    await new Promise((done) => setTimeout(done, 100));
  }
}

export const RPS = 2;
export const BATCH = 50;
export const BURST = 50;

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

/** A bare keep-alive POST: the load generator shares the two cores, so it should spend as little as it can. */
export function postJson(url: string, body: unknown, token: string): Promise<number> {
  const payload = JSON.stringify(body);
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        agent,
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(payload),
          Authorization: `Bearer ${token}`,
        },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

export function started(callId: string, n: number) {
  return {
    event: 'call.started',
    callId,
    direction: n % 2 ? 'inbound' : 'outbound',
    phoneNumber: `+4930${String(1000000 + n)}`,
    extension: '101',
    at: '2026-11-22T10:00:00+01:00',
  };
}

export function ended(callId: string) {
  return {
    event: 'call.ended',
    callId,
    at: '2026-11-22T10:01:00+01:00',
    durationSec: 60,
    status: 'answered',
  };
}

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * Delivery figures from the sandbox's request log. The sustained rate is measured where the portal's
 * budget is what limits delivery: from the first request that finds the portal's leaky bucket (replayed
 * from the log: +1 a request, draining RPS a second) at 80 % of the burst, to the last that does, without
 * the first and last tenth of that time.
 * Skipping a fixed number of first requests instead overstates it whenever intake is slower than the
 * burst, because the bucket then drains while those requests go out.
 */
export function deliveryFigures(
  log: { at: number; commands: number }[],
  stats: { requests: number; byStatus?: Record<string, number>; maxRequestsInAnySecond: number },
  seconds: number,
) {
  const sorted = [...log].sort((a, b) => a.at - b.at);
  const full = fullBucketSpan(sorted);
  const limited = full ? steadyPart(sorted.slice(full.first, full.last + 1)) : [];
  const sustainedSeconds = limited.length > 1 ? (limited[limited.length - 1].at - limited[0].at) / 1000 : NaN;
  // The requests after the first limited one, over the time from it to the last. While the bucket is not
  // empty the portal drains exactly RPS a second; requests beyond that only raise the bucket's level (burst
  // credit, large in a short window), so the sustained rate is min(RPS, requests/s) × commands per request.
  const sent = limited.slice(1);
  const commandsPerLimitedRequest = sent.reduce((sum, entry) => sum + entry.commands, 0) / sent.length;
  const sustainedCommandsPerSec = Math.min(RPS, sent.length / sustainedSeconds) * commandsPerLimitedRequest;
  const commands = sorted.reduce((sum, entry) => sum + entry.commands, 0);
  const ceiling = RPS * BATCH;
  return {
    commands,
    requests: stats.requests,
    commandsPerRequest: Number((commands / stats.requests).toFixed(1)),
    seconds: Number(seconds.toFixed(1)),
    commandsPerSec: Number((commands / seconds).toFixed(1)),
    sustainedSeconds: Number(sustainedSeconds.toFixed(1)),
    sustainedRequestsPerSec: Number((sent.length / sustainedSeconds).toFixed(2)),
    sustainedCommandsPerSec: Number(sustainedCommandsPerSec.toFixed(1)),
    ceilingCommandsPerSec: ceiling,
    sustainedRatioOfCeiling: Number((sustainedCommandsPerSec / ceiling).toFixed(3)),
    overallRatioOfCeiling: Number((commands / seconds / ceiling).toFixed(3)),
    portal503s: stats.byStatus?.['503'] ?? 0,
    maxRequestsInAnySecond: stats.maxRequestsInAnySecond,
  };
}

/**
 * The middle of a budget-bound stretch by time, without its first and last tenth: where the bucket fills
 * at the start of the stretch the last small batches of the ramp are paid by burst credit, and at its end
 * the backlog runs out.
 */
function steadyPart<T extends { at: number }>(span: T[]): T[] {
  if (span.length < 3) return span;
  const from = span[0].at;
  const length = span[span.length - 1].at - from;
  return span.filter((entry) => entry.at >= from + length / 10 && entry.at <= from + (length * 9) / 10);
}

/**
 * The first and last requests after which the replayed bucket holds 80 % of the burst, if it ever does:
 * between them the budget, not the backlog, limits delivery (the bridge keeps headroom, and with replicas
 * a reserve for lookups, so it never fills the bucket to the brim).
 */
function fullBucketSpan(sorted: { at: number }[]): { first: number; last: number } | undefined {
  let level = 0;
  let span: { first: number; last: number } | undefined;
  for (let i = 0; i < sorted.length; i++) {
    if (i > 0) level = Math.max(0, level - (RPS * (sorted[i].at - sorted[i - 1].at)) / 1000);
    level += 1;
    if (level >= BURST * 0.8) span = { first: span?.first ?? i, last: i };
  }
  return span;
}

/** A process's peak resident memory (VmHWM, /proc) in MB. */
export function peakRssMb(pid: number): number {
  return procStatusMb(pid, 'VmHWM');
}

/** A process's resident memory now (VmRSS, /proc) in MB. */
export function rssMb(pid: number): number {
  return procStatusMb(pid, 'VmRSS');
}

function procStatusMb(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)![1]) / 1024;
}

/** `PUT` of a wav recording to `url` with the PBX token; resolves the answer's status. */
export function putRecording(url: string, body: Buffer, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, {
      method: 'PUT',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'audio/wav',
        'content-length': String(body.length),
      },
    });
    request.once('response', (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.once('error', reject);
    request.end(body);
  });
}
