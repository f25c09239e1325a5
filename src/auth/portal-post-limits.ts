import { HttpException, HttpStatus } from '@nestjs/common';
import { LRUCache } from 'lru-cache';

/**
 * A refused post with `Retry-After`, set by the controller from `retryAfterSec`: 429 (too many from one
 * address or for one portal), or 503 (the service cannot take it now).
 */
export class RetryLater extends HttpException {
  constructor(
    readonly retryAfterSec: number,
    message: string,
    status: HttpStatus.TOO_MANY_REQUESTS | HttpStatus.SERVICE_UNAVAILABLE = HttpStatus.TOO_MANY_REQUESTS,
  ) {
    super({ statusCode: status, message }, status);
  }
}

/** `burst` at once, then one more every `refillMs`. */
export class TokenBucket {
  private tokens: number;
  private updatedAt: number;

  constructor(
    private readonly burst: number,
    private readonly refillMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = burst;
    this.updatedAt = now();
  }

  /** Takes one token; returns 0, or the seconds until one is there (nothing taken). */
  take(): number {
    if (this.level() >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.ceil(this.msUntilNext() / 1000);
  }

  /** The tokens there now (fractional). */
  level(): number {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + (now - this.updatedAt) / this.refillMs);
    this.updatedAt = now;
    return this.tokens;
  }

  /** Milliseconds until a whole token is there (0: one is). */
  msUntilNext(): number {
    return Math.max(0, (1 - this.level()) * this.refillMs);
  }

  /** Puts back a token taken for something that did not happen, or whose cost was refunded. */
  giveBack(): void {
    this.tokens = Math.min(this.burst, this.tokens + 1);
  }
}

/** How many sources are remembered; the least recent ones are forgotten first (and start full again). */
const SOURCES_KEPT = 10_000;

/** One token bucket per key (a source address, a portal), made full when first needed. */
export class KeyedBuckets {
  private readonly buckets: LRUCache<string, TokenBucket>;

  /** `kept`: keys remembered; the least recent are forgotten first (and start full again). */
  constructor(
    private readonly burst: number,
    private readonly refillMs: number,
    kept: number,
  ) {
    this.buckets = new LRUCache<string, TokenBucket>({ max: kept });
  }

  of(key: string): TokenBucket {
    let bucket = this.buckets.get(key);
    if (!bucket) {
      bucket = new TokenBucket(this.burst, this.refillMs);
      this.buckets.set(key, bucket);
    }
    return bucket;
  }
}

/** A token bucket per source address, for the portal's posts to the application. */
export class SourceRateLimit {
  private readonly buckets: KeyedBuckets;

  constructor(
    private readonly what: string,
    burst: number,
    refillMs: number,
  ) {
    this.buckets = new KeyedBuckets(burst, refillMs, SOURCES_KEPT);
  }

  /** Throws RetryLater when `source` has used up its posts. */
  admit(source: string): void {
    const waitSec = this.buckets.of(source).take();
    if (waitSec > 0) {
      throw new RetryLater(waitSec, `too many ${this.what} posts from this address; retry in ${waitSec} s`);
    }
  }
}

/**
 * What one install post asks to have checked: the portal it claims (`claim`, its member_id), what makes it
 * the same post as another (`identity`: a digest of its tokens) and where it came from (`source`).
 */
export interface InstallClaim {
  claim: string;
  identity: string;
  source: string;
}

/**
 * A check's verdict: confirmed (its value is the post's answer), refused as forged (the OAuth server or the
 * portal did not confirm the claim: it counts against the source), or not checked (an outage: it does not).
 */
export type InstallVerdict<T> =
  { confirmed: true; value: T } | { confirmed: false; forged: boolean; error: unknown };

export interface InstallQueueLimits {
  /** Checks at the OAuth server or portal at once. */
  concurrency: number;
  /** Checks started: a burst of this many, then one more every `refillMs`. */
  burst: number;
  refillMs: number;
  /**
   * Failed checks one source may cause: a burst of this many, then one more every `sourceRefillMs`. A
   * confirmed check gives its credit back, so a source whose posts are real is never slowed.
   */
  sourceCredit: number;
  sourceRefillMs: number;
  /**
   * Failed checks all sources that have not yet posted a confirmed install (strangers) may cause together,
   * likewise: forgeries from many addresses cost no more than from one.
   */
  strangerCredit: number;
  strangerRefillMs: number;
  /** How long a source whose post was confirmed stays known (not a stranger). */
  provenMs: number;
  /** Posts waiting or being checked at once, across all claims (memory), past which a post gets 503. */
  maxWaiting: number;
  /** How long a post may wait for its check before it is answered 503 (nothing is stored). */
  waitMs: number;
  /** How long a post (its claim and tokens) that failed its check is answered from memory (403). */
  forgedMs: number;
}

interface Credit {
  bucket: TokenBucket;
  /** Checks in flight on this credit: each may give its credit back, so a waiter may get it. */
  inFlight: number;
}

interface SourceRecord extends Credit {
  provenUntil: number;
}

interface Waiting {
  request: InstallClaim;
  check: () => Promise<InstallVerdict<unknown>>;
  enqueuedAt: number;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Install posts waiting for their check with the vendor's OAuth server (or the portal), deduplicated and
 * never refused for their rate (a vendor posts every portal's install from a few addresses and does not
 * retry): one check in flight per claimed portal, the same post twice shares one check and its answer, and
 * checks start from one FIFO queue within `concurrency` and a rate. What keeps forgeries cheap is what they
 * cost: each failed check takes a credit from its source (and, for a source with no confirmed install yet,
 * from the strangers' shared credit); a confirmed one gives it back. A source out of credit with nothing
 * in flight that could give one back gets 503 at once (nothing checked) until its credit refills, and a
 * post that failed is answered 403 from memory when it comes again. Only past `maxWaiting` (memory) is a post refused for load,
 * with 503.
 */
export class InstallQueue {
  private readonly waiting: Waiting[] = [];
  /** Posts in the queue or in flight by identity: a second one joins the first's answer. */
  private readonly joined = new Map<string, Promise<unknown>>();
  private readonly busyClaims = new Set<string>();
  private inFlight = 0;
  private readonly rate: TokenBucket;
  private readonly sources: LRUCache<string, SourceRecord>;
  private readonly strangers: Credit;
  private readonly forged: LRUCache<string, { error: unknown }>;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly limits: InstallQueueLimits,
    private readonly now: () => number = Date.now,
  ) {
    this.rate = new TokenBucket(limits.burst, limits.refillMs, now);
    this.strangers = {
      bucket: new TokenBucket(limits.strangerCredit, limits.strangerRefillMs, now),
      inFlight: 0,
    };
    this.sources = new LRUCache({ max: SOURCES_KEPT });
    this.forged = new LRUCache({ max: SOURCES_KEPT, ttl: limits.forgedMs, ttlAutopurge: false });
  }

  run<T>(request: InstallClaim, check: () => Promise<InstallVerdict<T>>): Promise<T> {
    const remembered = this.forged.get(forgedKey(request));
    if (remembered) return Promise.reject(remembered.error);
    const key = `${request.claim}\u0000${request.identity}`;
    const same = this.joined.get(key);
    if (same) return same as Promise<T>;
    if (this.joined.size >= this.limits.maxWaiting) {
      return Promise.reject(
        new RetryLater(
          5,
          `${this.joined.size} install posts are waiting for their check; post it again in 5 s`,
          HttpStatus.SERVICE_UNAVAILABLE,
        ),
      );
    }
    const answer = new Promise<T>((resolve, reject) => {
      this.waiting.push({
        request,
        check,
        enqueuedAt: this.now(),
        resolve: resolve as (value: unknown) => void,
        reject,
      });
    });
    this.joined.set(key, answer);
    const forget = () => {
      if (this.joined.get(key) === answer) this.joined.delete(key);
    };
    answer.then(forget, forget);
    this.pump();
    return answer;
  }

  /** Starts every waiting check that may start now, in order; the rest wait for a slot, a claim or credit. */
  private pump(): void {
    const now = this.now();
    let nextWakeMs = Infinity;
    for (let index = 0; index < this.waiting.length;) {
      const entry = this.waiting[index];
      const left = entry.enqueuedAt + this.limits.waitMs - now;
      if (left <= 0) {
        this.waiting.splice(index, 1);
        entry.reject(
          new RetryLater(
            5,
            `the install could not be checked within ${Math.round(this.limits.waitMs / 1000)} s; post it again`,
            HttpStatus.SERVICE_UNAVAILABLE,
          ),
        );
        continue;
      }
      nextWakeMs = Math.min(nextWakeMs, left);
      if (this.busyClaims.has(entry.request.claim)) {
        index += 1;
        continue;
      }
      const source = this.sourceOf(entry.request.source);
      const credits: Credit[] = source.provenUntil > now ? [source] : [source, this.strangers];
      const short = credits.filter((credit) => credit.bucket.level() < 1);
      if (short.length) {
        const refillMs = Math.max(...short.map((credit) => credit.bucket.msUntilNext()));
        if (short.some((credit) => credit.inFlight === 0 && credit.bucket.msUntilNext() > left)) {
          // Nothing in flight can give credit back, and the refill comes after the post's wait: answer now.
          this.waiting.splice(index, 1);
          const waitSec = Math.ceil(refillMs / 1000);
          entry.reject(
            new RetryLater(
              waitSec,
              `install posts from this address keep failing their check; this one was not checked: post it again in ${waitSec} s`,
              HttpStatus.SERVICE_UNAVAILABLE,
            ),
          );
          continue;
        }
        nextWakeMs = Math.min(nextWakeMs, refillMs);
        index += 1;
        continue;
      }
      if (this.inFlight >= this.limits.concurrency) break;
      if (this.rate.level() < 1) {
        nextWakeMs = Math.min(nextWakeMs, this.rate.msUntilNext());
        break;
      }
      this.waiting.splice(index, 1);
      this.rate.take();
      this.start(entry, credits);
    }
    this.wakeIn(this.waiting.length ? nextWakeMs : Infinity);
  }

  private start(entry: Waiting, credits: Credit[]): void {
    const { request } = entry;
    for (const credit of credits) {
      credit.bucket.take();
      credit.inFlight += 1;
    }
    this.busyClaims.add(request.claim);
    this.inFlight += 1;
    let giveBack = true;
    entry
      .check()
      .then(
        (verdict) => {
          if (verdict.confirmed) {
            this.sourceOf(request.source).provenUntil = this.now() + this.limits.provenMs;
            entry.resolve(verdict.value);
            return;
          }
          if (verdict.forged) {
            giveBack = false;
            this.forged.set(forgedKey(request), { error: verdict.error });
          }
          entry.reject(verdict.error);
        },
        (error: unknown) => entry.reject(error),
      )
      .finally(() => {
        for (const credit of credits) {
          credit.inFlight -= 1;
          if (giveBack) credit.bucket.giveBack();
        }
        this.busyClaims.delete(request.claim);
        this.inFlight -= 1;
        this.pump();
      });
  }

  private sourceOf(address: string): SourceRecord {
    let source = this.sources.get(address);
    if (!source) {
      source = {
        bucket: new TokenBucket(this.limits.sourceCredit, this.limits.sourceRefillMs, this.now),
        inFlight: 0,
        provenUntil: 0,
      };
      this.sources.set(address, source);
    }
    return source;
  }

  private wakeIn(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (!Number.isFinite(ms)) return;
    this.timer = setTimeout(() => this.pump(), Math.max(10, Math.ceil(ms)));
    this.timer.unref();
  }
}

/** The same post (its claim and tokens), whichever address repeats it. */
function forgedKey(request: InstallClaim): string {
  return `${request.claim}\u0000${request.identity}`;
}
