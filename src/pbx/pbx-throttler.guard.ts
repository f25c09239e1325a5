import { CanActivate, ExecutionContext, Injectable, OnModuleDestroy } from '@nestjs/common';
import { ThrottlerException } from '@nestjs/throttler';
import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { presentedToken } from '../common/presented-token';
import { IntakeSettings } from '../config/settings';

/** The limit counting a PBX token's writes (posts, recordings): PBX_RATE_LIMIT_RPS. */
export const PBX_WRITES = 'writes';
/** The limit counting its reads (call status, lookups): PBX_READ_RATE_LIMIT_RPS. */
export const PBX_READS = 'reads';

/** Reads change nothing and cost one keyed store read (or a cached lookup): counted apart from writes. */
export function pbxRequestKind(request: { method?: string }): typeof PBX_WRITES | typeof PBX_READS {
  return request.method === 'GET' || request.method === 'HEAD' ? PBX_READS : PBX_WRITES;
}

/** The window: a request counts against its limit for one second after it was made. */
const WINDOW_MS = 1000;
/** Idle counters (no hit in the window, not blocked) are dropped this often. */
const SWEEP_MS = 60_000;

/**
 * One token's requests to one route of one kind: the expiry of each counted request, oldest first (a queue
 * read from `head`), and, once the limit was passed, until when every request is refused.
 */
interface Hits {
  expiries: number[];
  head: number;
  blockedUntil: number;
  /** The window shown in `X-RateLimit-Reset`: started by the first request after the last one ended. */
  windowEnds: number;
}

/**
 * Counts requests per PBX token (hashed, never kept in clear) and route, so one flooding PBX gets 429
 * alone. Reads and writes have limits of their own: a PBX reading the status of the calls it just posted
 * spends none of its write budget, and a PBX polling statuses in a loop cannot starve its own posts.
 * The rule is @nestjs/throttler's (a one-second sliding window; past the limit, refused for a second with
 * `Retry-After`), in one Map lookup and an array push per request.
 */
@Injectable()
export class PbxThrottlerGuard implements CanActivate, OnModuleDestroy {
  private readonly limits: Record<typeof PBX_WRITES | typeof PBX_READS, number>;
  private readonly counters = new Map<string, Hits>();
  private readonly sweep: NodeJS.Timeout;

  constructor(intake: IntakeSettings) {
    this.limits = { [PBX_WRITES]: intake.rateLimitRps, [PBX_READS]: intake.readRateLimitRps };
    this.sweep = setInterval(() => this.dropIdle(Date.now()), SWEEP_MS);
    this.sweep.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.sweep);
    this.counters.clear();
  }

  canActivate(context: ExecutionContext): boolean {
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    const kind = pbxRequestKind(request);
    const limit = this.limits[kind];
    const token = presentedToken(request) ?? '';
    const tracker = createHash('sha256').update(token).digest('hex').slice(0, 32);
    const key = `${kind}/${context.getClass().name}/${context.getHandler().name}/${tracker}`;
    const now = Date.now();
    let hits = this.counters.get(key);
    if (!hits) {
      hits = { expiries: [], head: 0, blockedUntil: 0, windowEnds: 0 };
      this.counters.set(key, hits);
    }
    expire(hits, now);
    if (hits.windowEnds <= now) hits.windowEnds = now + WINDOW_MS;
    if (hits.blockedUntil > now) return this.refuse(response, hits, now);
    if (hits.blockedUntil !== 0) {
      // The block is over: counting starts again from this request.
      hits.blockedUntil = 0;
      hits.expiries = [];
      hits.head = 0;
    }
    hits.expiries.push(now + WINDOW_MS);
    const counted = hits.expiries.length - hits.head;
    if (counted > limit) {
      hits.blockedUntil = now + WINDOW_MS;
      return this.refuse(response, hits, now);
    }
    response.setHeader(`X-RateLimit-Limit-${kind}`, limit);
    response.setHeader(`X-RateLimit-Remaining-${kind}`, Math.max(0, limit - counted));
    response.setHeader(`X-RateLimit-Reset-${kind}`, Math.ceil((hits.windowEnds - now) / 1000));
    return true;
  }

  /** 429 with the standard `Retry-After`: the whole seconds until the block ends. */
  private refuse(response: Response, hits: Hits, now: number): never {
    response.setHeader('Retry-After', Math.ceil((hits.blockedUntil - now) / 1000));
    throw new ThrottlerException();
  }

  private dropIdle(now: number): void {
    for (const [key, hits] of this.counters) {
      expire(hits, now);
      if (hits.blockedUntil <= now && hits.head === hits.expiries.length) this.counters.delete(key);
    }
  }
}

/** Forgets the requests whose second has passed; the array is compacted once half of it is spent. */
function expire(hits: Hits, now: number): void {
  const { expiries } = hits;
  while (hits.head < expiries.length && expiries[hits.head] <= now) hits.head += 1;
  if (hits.head > 64 && hits.head * 2 > expiries.length) {
    hits.expiries = expiries.slice(hits.head);
    hits.head = 0;
  }
}
