/**
 * The sandbox's notion of "now": the wall clock plus an offset that tests can push forward, so rules measured
 * in minutes (30-minute register dedupe, token and code lifetimes) are testable without waiting.
 */
export class SandboxClock {
  private offsetMs = 0;

  now(): number {
    return Date.now() + this.offsetMs;
  }

  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError('the sandbox clock only moves forward');
    this.offsetMs += ms;
  }
}
