/** What the benchmarks share: a lean keep-alive POST, call events, percentiles and the delivery ratio. */
import { Agent, request as httpRequest } from 'node:http';

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
 * Delivery figures from the sandbox's request log. The sustained rate leaves out the portal's initial
 * burst allowance: commands after the first `BURST` requests, over the time they took.
 */
export function deliveryFigures(
  log: { at: number; commands: number }[],
  stats: { requests: number; byStatus?: Record<string, number>; maxRequestsInAnySecond: number },
  seconds: number,
) {
  const sorted = [...log].sort((a, b) => a.at - b.at);
  const afterBurst = sorted.slice(BURST);
  const sustainedSeconds =
    afterBurst.length > 1 ? (afterBurst[afterBurst.length - 1].at - afterBurst[0].at) / 1000 : NaN;
  const sustainedCommands = afterBurst.slice(1).reduce((sum, entry) => sum + entry.commands, 0);
  const commands = sorted.reduce((sum, entry) => sum + entry.commands, 0);
  const ceiling = RPS * BATCH;
  return {
    commands,
    requests: stats.requests,
    commandsPerRequest: Number((commands / stats.requests).toFixed(1)),
    seconds: Number(seconds.toFixed(1)),
    commandsPerSec: Number((commands / seconds).toFixed(1)),
    sustainedCommandsPerSec: Number((sustainedCommands / sustainedSeconds).toFixed(1)),
    ceilingCommandsPerSec: ceiling,
    sustainedRatioOfCeiling: Number((sustainedCommands / sustainedSeconds / ceiling).toFixed(3)),
    overallRatioOfCeiling: Number((commands / seconds / ceiling).toFixed(3)),
    portal503s: stats.byStatus?.['503'] ?? 0,
    maxRequestsInAnySecond: stats.maxRequestsInAnySecond,
  };
}
