import { ServerResponse } from 'node:http';
import { portalTime } from './envelope';
import { isPlainObject } from './params';
import { SandboxPortalError } from './sandbox-portal-error';

/** Faults tests can inject; each may be limited to the next `times` occurrences (default: until cleared). */
export type FaultSpec =
  /** Every /rest and /oauth request gets its socket destroyed without an answer. */
  | { kind: 'outage'; times?: number }
  /** Requests (or, with `method`, calls of that method, also inside a batch) answer this error. */
  | {
      kind: 'http';
      status: number;
      error: string;
      description?: string;
      method?: string;
      times?: number;
      /** For OPERATION_TIME_LIMIT: seconds until `time.operating_reset_at` (default 5). */
      resetAfterSec?: number;
    }
  /**
   * Every /rest answer (with `method`: of requests calling it, also inside a batch) is held back this long;
   * the request is processed at once.
   */
  | { kind: 'latency'; ms: number; method?: string; times?: number }
  /**
   * A request calling `method` (also inside a batch) is processed, then its connection is dropped without
   * an answer: what a caller sees when an answer is lost on the way back. With `processAfterMs`, the
   * connection is dropped at once and the request is processed only that much later: a portal still busy
   * with a request its caller has given up on (a timeout), whose effect shows up after the caller looked.
   */
  | { kind: 'lose-answer'; method: string; times?: number; processAfterMs?: number }
  /** The portal moved: /rest requests are redirected to the same path under `location`. */
  | { kind: 'redirect'; location: string; status?: 301 | 302 | 307 | 308; times?: number }
  /** The user declines the application on /oauth/authorize/ (`error=access_denied`). */
  | { kind: 'decline'; times?: number }
  /**
   * A proxy or firewall in front of the portal: a /rest request whose body contains `text` is refused with
   * `status` and an HTML page, before the portal sees it (nothing in it runs, no budget is spent).
   */
  | { kind: 'refuse'; text: string; status: number; times?: number };

export type ActiveFault = FaultSpec & { id: number; remaining: number | null };

const DEFAULT_DESCRIPTIONS: Record<string, string> = {
  INTERNAL_SERVER_ERROR: 'Internal server error',
  QUERY_LIMIT_EXCEEDED: 'Too many requests',
  OPERATION_TIME_LIMIT: 'Method is blocked due to operation time limit.',
  ACCESS_DENIED: 'Access denied!',
};

/** Injected faults, consumed in the order they were added. */
export class FaultInjector {
  private faults: ActiveFault[] = [];
  private nextId = 1;

  constructor(private readonly now: () => number) {}

  add(spec: FaultSpec): ActiveFault {
    const fault = { ...spec, id: this.nextId++, remaining: spec.times ?? null } as ActiveFault;
    this.faults.push(fault);
    return fault;
  }

  list(): ActiveFault[] {
    return this.faults.map((fault) => ({ ...fault }));
  }

  clear(): void {
    this.faults = [];
  }

  outage(): boolean {
    return this.take((fault) => fault.kind === 'outage') !== undefined;
  }

  redirect(): { location: string; status: number } | undefined {
    const fault = this.take((candidate) => candidate.kind === 'redirect');
    return fault?.kind === 'redirect' ? { location: fault.location, status: fault.status ?? 302 } : undefined;
  }

  declineAuthorization(): boolean {
    return this.take((fault) => fault.kind === 'decline') !== undefined;
  }

  /** The proxy's refusal of a request body holding a refused text, as an HTML page. */
  refusal(body: Buffer): { status: number; body: string } | undefined {
    const text = body.toString('utf8');
    const fault = this.take((candidate) => candidate.kind === 'refuse' && text.includes(candidate.text));
    if (fault?.kind !== 'refuse') return undefined;
    return {
      status: fault.status,
      body: `<html><head><title>${fault.status} Forbidden</title></head><body><h1>Request blocked</h1><p>The request was rejected by the web application firewall.</p></body></html>`,
    };
  }

  /** `methods`: what the request called (lower case; a batch's commands' methods). */
  latencyMs(methods: readonly string[] = []): number {
    const fault = this.take(
      (candidate) => candidate.kind === 'latency' && callsMethod(candidate.method, methods),
    );
    return fault?.kind === 'latency' ? fault.ms : 0;
  }

  /** Whether this request's answer is to be lost (it was processed). */
  loseAnswer(methods: readonly string[]): boolean {
    return (
      this.take(
        (candidate) =>
          candidate.kind === 'lose-answer' &&
          candidate.processAfterMs === undefined &&
          callsMethod(candidate.method, methods),
      ) !== undefined
    );
  }

  /** How long a request is processed after its caller was cut off (`lose-answer` with `processAfterMs`). */
  lateProcessingMs(methods: readonly string[]): number | undefined {
    const fault = this.take(
      (candidate) =>
        candidate.kind === 'lose-answer' &&
        candidate.processAfterMs !== undefined &&
        callsMethod(candidate.method, methods),
    );
    return fault?.kind === 'lose-answer' ? fault.processAfterMs : undefined;
  }

  /** A fault for the whole request, whatever method it calls. */
  requestError(): SandboxPortalError | undefined {
    return this.httpError((fault) => fault.method === undefined);
  }

  /** A fault for one call of `method` (lower case), direct or inside a batch. */
  methodError(method: string): SandboxPortalError | undefined {
    return this.httpError((fault) => fault.method !== undefined && fault.method.toLowerCase() === method);
  }

  private httpError(
    applies: (fault: Extract<FaultSpec, { kind: 'http' }>) => boolean,
  ): SandboxPortalError | undefined {
    const fault = this.take((candidate) => candidate.kind === 'http' && applies(candidate));
    if (fault?.kind !== 'http') return undefined;
    const description =
      fault.description ?? DEFAULT_DESCRIPTIONS[fault.error] ?? `Injected fault ${fault.error}`;
    if (fault.error !== 'OPERATION_TIME_LIMIT') {
      return new SandboxPortalError(fault.status, fault.error, description);
    }
    const now = this.now();
    const time = portalTime(now, now, now + (fault.resetAfterSec ?? 5) * 1000);
    return new SandboxPortalError(fault.status, fault.error, description, { time });
  }

  private take(matches: (fault: ActiveFault) => boolean): ActiveFault | undefined {
    const fault = this.faults.find(matches);
    if (!fault) return undefined;
    if (fault.remaining !== null) {
      fault.remaining -= 1;
      if (fault.remaining <= 0) this.faults = this.faults.filter((candidate) => candidate !== fault);
    }
    return fault;
  }
}

/** A fault limited to `method` applies to requests calling it; one without applies to all. */
function callsMethod(method: string | undefined, methods: readonly string[]): boolean {
  return method === undefined || methods.includes(method.toLowerCase());
}

/** Answers with a page that is not the portal's JSON (a proxy's refusal). */
export function sendPage(res: ServerResponse, status: number, page: string): void {
  if (res.writableEnded || res.destroyed) return;
  res.writeHead(status, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(page)),
  });
  res.end(page);
}

/** Checks a fault posted to the control API; the message names what is wrong. */
export function parseFaultSpec(body: unknown): FaultSpec | string {
  if (!isPlainObject(body)) return 'the body must be a JSON object';
  const times = body.times;
  if (times !== undefined && (!Number.isInteger(times) || (times as number) < 1)) {
    return 'times must be a positive integer';
  }
  switch (body.kind) {
    case 'outage':
    case 'decline':
      return { kind: body.kind, times: times as number | undefined };
    case 'latency':
      if (!Number.isInteger(body.ms) || (body.ms as number) < 0) {
        return 'latency needs ms, a non-negative integer';
      }
      if (body.method !== undefined && typeof body.method !== 'string') return 'method must be a string';
      return {
        kind: 'latency',
        ms: body.ms as number,
        method: body.method as string | undefined,
        times: times as number | undefined,
      };
    case 'lose-answer':
      if (typeof body.method !== 'string' || body.method === '') {
        return 'lose-answer needs method, the method whose answer is lost';
      }
      if (
        body.processAfterMs !== undefined &&
        (!Number.isInteger(body.processAfterMs) || (body.processAfterMs as number) < 0)
      ) {
        return 'processAfterMs must be a non-negative integer';
      }
      return {
        kind: 'lose-answer',
        method: body.method,
        times: times as number | undefined,
        processAfterMs: body.processAfterMs as number | undefined,
      };
    case 'redirect':
      if (typeof body.location !== 'string' || !/^https?:\/\//.test(body.location)) {
        return 'redirect needs location, an http(s) URL';
      }
      if (body.status !== undefined && ![301, 302, 307, 308].includes(body.status as number)) {
        return 'redirect status must be 301, 302, 307 or 308';
      }
      return {
        kind: 'redirect',
        location: body.location.replace(/\/+$/, ''),
        status: body.status as 302 | undefined,
        times: times as number | undefined,
      };
    case 'refuse':
      if (typeof body.text !== 'string' || body.text === '') return 'refuse needs text, a non-empty string';
      if (!Number.isInteger(body.status) || (body.status as number) < 400 || (body.status as number) > 599) {
        return 'refuse needs status, 400-599';
      }
      return {
        kind: 'refuse',
        text: body.text,
        status: body.status as number,
        times: times as number | undefined,
      };
    case 'http':
      if (!Number.isInteger(body.status) || (body.status as number) < 400 || (body.status as number) > 599) {
        return 'http needs status, 400-599';
      }
      if (typeof body.error !== 'string') return 'http needs error, the error code';
      if (body.description !== undefined && typeof body.description !== 'string') {
        return 'description must be a string';
      }
      if (body.method !== undefined && typeof body.method !== 'string') return 'method must be a string';
      if (body.resetAfterSec !== undefined && typeof body.resetAfterSec !== 'number') {
        return 'resetAfterSec must be a number';
      }
      return {
        kind: 'http',
        status: body.status as number,
        error: body.error,
        description: body.description as string | undefined,
        method: body.method as string | undefined,
        times: times as number | undefined,
        resetAfterSec: body.resetAfterSec as number | undefined,
      };
    default:
      return 'kind must be one of outage, http, latency, lose-answer, redirect, decline, refuse';
  }
}
