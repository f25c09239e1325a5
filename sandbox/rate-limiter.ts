/**
 * The portal's leaky bucket: every accepted request adds one, the bucket drains `ratePerSecond`
 * continuously, and a request that would push it past `burst` is refused (and adds nothing).
 */
export class SandboxRateLimiter {
  private level = 0;
  private updatedAt: number;

  constructor(
    readonly ratePerSecond: number,
    readonly burst: number,
    private readonly now: () => number,
  ) {
    this.updatedAt = now();
  }

  /**
   * True when the request fits and has been counted; false when the portal must answer 503. `at`: when the
   * request arrived (its headers), which is when a portal counts it, however long its body takes to read
   * (an earlier time than the last one counted drains nothing).
   */
  tryTake(at = this.now()): boolean {
    this.drain(at);
    if (this.level + 1 > this.burst) return false;
    this.level += 1;
    return true;
  }

  currentLevel(): number {
    this.drain();
    return this.level;
  }

  reset(): void {
    this.level = 0;
    this.updatedAt = this.now();
  }

  private drain(now = this.now()): void {
    const elapsedSec = Math.max(0, now - this.updatedAt) / 1000;
    this.level = Math.max(0, this.level - elapsedSec * this.ratePerSecond);
    this.updatedAt = Math.max(this.updatedAt, now);
  }
}
