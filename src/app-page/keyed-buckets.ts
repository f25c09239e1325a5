import { LRUCache } from 'lru-cache';
import { TokenBucket } from '../auth/portal-post-limits';

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
