/**
 * The portal's operating-time limit (how real portals behave "Errors"): the server time each method uses is summed
 * over a sliding window (600 s on real portals); a method over the limit (480 s) is blocked until enough of
 * its use has left the window, its calls answering 429 `OPERATION_TIME_LIMIT`. Every answer reports the
 * method's use as `time.operating` and when part of it is freed as `time.operating_reset_at`.
 */
export interface OperatingPerformance {
  /** Server time one command takes, ms: a batch of n commands is answered n × commandMs after arrival. */
  commandMs: number;
  windowSec: number;
  limitSec: number;
}

interface Charge {
  /** When the command finished (ms, sandbox clock); it leaves the window `windowSec` later. */
  at: number;
  sec: number;
}

export interface MethodOperating {
  usedSec: number;
  /** When the oldest use in the window leaves it (ms); now + window when there is none. */
  resetAt: number;
}

export class OperatingTimeLedger {
  private readonly charges = new Map<string, Charge[]>();
  /** Commands refused because their method was blocked. */
  refused = 0;

  constructor(public performance: OperatingPerformance) {}

  /** Charges one command of `method` that finished at `at`. */
  charge(method: string, at: number, sec: number): void {
    if (sec <= 0) return;
    const list = this.charges.get(method) ?? [];
    list.push({ at, sec });
    this.charges.set(method, list);
  }

  /** The method's use in the window at `now`: every charge that has not left it (a batch's later commands included). */
  used(method: string, now: number): MethodOperating {
    const windowMs = this.performance.windowSec * 1000;
    const list = this.prune(method, now);
    const usedSec = list.reduce((sum, charge) => sum + charge.sec, 0);
    return { usedSec: Math.round(usedSec * 10_000) / 10_000, resetAt: (list[0]?.at ?? now) + windowMs };
  }

  blocked(method: string, now: number): boolean {
    return this.used(method, now).usedSec > this.performance.limitSec;
  }

  snapshot(now: number): Record<string, MethodOperating & { blocked: boolean }> {
    return Object.fromEntries(
      [...this.charges.keys()].map((method) => {
        const use = this.used(method, now);
        return [method, { ...use, blocked: use.usedSec > this.performance.limitSec }];
      }),
    );
  }

  reset(): void {
    this.charges.clear();
    this.refused = 0;
  }

  private prune(method: string, now: number): Charge[] {
    const list = this.charges.get(method) ?? [];
    const horizon = now - this.performance.windowSec * 1000;
    let drop = 0;
    while (drop < list.length && list[drop].at <= horizon) drop += 1;
    if (drop > 0) list.splice(0, drop);
    if (list.length === 0) this.charges.delete(method);
    return list;
  }
}
