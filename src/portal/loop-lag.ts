import { IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * How long this process's event loop has lately been held up (the longest stall of the last 10 to 20 s),
 * in seconds. A request granted a budget unit leaves when the loop next runs its code: a stall between the
 * grant and the write (a synchronous commit, a large answer parsed) sends it that much later, so the
 * portal counts it closer to the next request than the mirror did. The budget keeps that much drain spare.
 */
export interface LoopLag {
  recentSec(): number;
}

const WINDOW_MS = 10_000;

class MeasuredLoopLag implements LoopLag {
  private histogram?: IntervalHistogram;
  private previousMaxNs = 0;
  private windowStart = Date.now();

  recentSec(): number {
    if (!this.histogram) {
      // Sampling every 20 ms costs a timer; started on first use, never keeps the process alive.
      this.histogram = monitorEventLoopDelay({ resolution: 20 });
      this.histogram.enable();
    }
    const now = Date.now();
    if (now - this.windowStart >= WINDOW_MS) {
      this.previousMaxNs = this.histogram.max;
      this.histogram.reset();
      this.windowStart = now;
    }
    const maxNs = Math.max(this.previousMaxNs, this.histogram.count > 0 ? this.histogram.max : 0);
    // The histogram counts the sampling interval itself in every delay: only what is beyond it is a stall.
    return Math.max(0, maxNs / 1e9 - 0.02);
  }
}

/** The process's own event loop (one for all budgets: they share it). */
export const PROCESS_LOOP_LAG: LoopLag = new MeasuredLoopLag();

/** For budgets driven by a clock of their own (specs): no stall ever. */
export const NO_LOOP_LAG: LoopLag = { recentSec: () => 0 };
