import { HttpException, HttpStatus } from '@nestjs/common';
import { LRUCache } from 'lru-cache';

/** A refused post: 429 with `Retry-After`, set by the controller from `retryAfterSec`. */
export class RetryLater extends HttpException {
  constructor(
    readonly retryAfterSec: number,
    message: string,
  ) {
    super({ statusCode: HttpStatus.TOO_MANY_REQUESTS, message }, HttpStatus.TOO_MANY_REQUESTS);
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
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + (now - this.updatedAt) / this.refillMs);
    this.updatedAt = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - this.tokens) * this.refillMs) / 1000);
  }
}

/** How many sources are remembered; the least recent ones are forgotten first (and start full again). */
const SOURCES_KEPT = 10_000;

/** A token bucket per source address, for the portal's posts to the application. */
export class SourceRateLimit {
  private readonly buckets = new LRUCache<string, TokenBucket>({ max: SOURCES_KEPT });

  constructor(
    private readonly what: string,
    private readonly burst: number,
    private readonly refillMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Throws RetryLater when `source` has used up its posts. */
  admit(source: string): void {
    let bucket = this.buckets.get(source);
    if (!bucket) {
      bucket = new TokenBucket(this.burst, this.refillMs, this.now);
      this.buckets.set(source, bucket);
    }
    const waitSec = bucket.take();
    if (waitSec > 0) {
      throw new RetryLater(waitSec, `too many ${this.what} posts from this address; retry in ${waitSec} s`);
    }
  }
}

/**
 * Checks of install posts with the portal (app.info, user.admin) cost the portal's request budget, and any
 * address can post. So, across all sources: at most `maxPending` at once and a bucket of `burst` checks
 * refilled one per `refillMs`; past either, the post is refused at once (nothing queued, nothing spent).
 */
export class InstallChecks {
  private pending = 0;
  private readonly bucket: TokenBucket;

  constructor(
    private readonly maxPending: number,
    burst: number,
    refillMs: number,
    now: () => number = Date.now,
  ) {
    this.bucket = new TokenBucket(burst, refillMs, now);
  }

  async run<T>(check: () => Promise<T>): Promise<T> {
    if (this.pending >= this.maxPending) {
      throw new RetryLater(5, `${this.pending} install checks are already under way; retry in 5 s`);
    }
    const waitSec = this.bucket.take();
    if (waitSec > 0) {
      throw new RetryLater(waitSec, `too many install posts to check; retry in ${waitSec} s`);
    }
    this.pending += 1;
    try {
      return await check();
    } finally {
      this.pending -= 1;
    }
  }
}

/**
 * Each source address's share of the install checks, taken before the global `InstallChecks`: at most
 * `maxPending` of its checks at once and a bucket of `burst` refilled one per `refillMs`. Set well below the
 * global limits, so one source (one stranger posting junk) can never use the global budget up; past its
 * share a post is refused at once (nothing queued, nothing spent at the OAuth server).
 */
export class SourceCheckShares {
  private readonly sources = new LRUCache<string, { bucket: TokenBucket; pending: number }>({
    max: SOURCES_KEPT,
  });

  constructor(
    private readonly maxPending: number,
    private readonly burst: number,
    private readonly refillMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async run<T>(source: string, check: () => Promise<T>): Promise<T> {
    let share = this.sources.get(source);
    if (!share) {
      share = { bucket: new TokenBucket(this.burst, this.refillMs, this.now), pending: 0 };
      this.sources.set(source, share);
    }
    if (share.pending >= this.maxPending) {
      throw new RetryLater(
        5,
        `${share.pending} install checks from this address are under way; retry in 5 s`,
      );
    }
    const waitSec = share.bucket.take();
    if (waitSec > 0) {
      throw new RetryLater(
        waitSec,
        `too many install posts from this address to check; retry in ${waitSec} s`,
      );
    }
    share.pending += 1;
    try {
      return await check();
    } finally {
      share.pending -= 1;
    }
  }
}
