/**
 * The portal's operating-time limit (how real portals behave, "Errors"): the server time each method uses is summed
 * over a sliding window (600 s on real portals); a method over the limit (480 s) is blocked, its calls
 * answering 429 `OPERATION_TIME_LIMIT`, until enough of its use has left the window. Every answer reports
 * the method's use as `time.operating` and when part of it is freed as `time.operating_reset_at`.
 *
 * The window is kept in tenths of the clock (6 s of a 60-s window, a minute of the real one). A tenth's use
 * goes into one bucket, opened by the first use in that tenth; the bucket leaves the window whole, one window
 * after that first use, at the whole second (the portal's clock in seconds, rounded down: a use at 10.7 s
 * leaves at 70 s). The count at a moment is the buckets opened by then that have not left, the use being
 * charged when it happens (a command when its own run ends); `operating_reset_at` is when the oldest of them
 * leaves (a window from the current second when there is none). A call is checked before it runs: the one
 * that takes the count over the limit completes, the next is refused.
 */
export type OperatingCharge = 'run' | 'batch-whole' | 'batch-upfront' | 'batch-upfront-no-reset';

export const OPERATING_CHARGES: readonly OperatingCharge[] = [
  'run',
  'batch-whole',
  'batch-upfront',
  'batch-upfront-no-reset',
];

/** The method a `batch-whole` portal charges and blocks for a batch's server time. */
export const BATCH_METHOD = 'batch';

export interface OperatingPerformance {
  /** Server time one command takes, ms: a batch of n commands is answered n × commandMs after arrival. */
  commandMs: number;
  windowSec: number;
  limitSec: number;
  /**
   * How server time is charged. `run` (default, as portals do): a batch itself is not charged; its commands
   * run one after another and each is charged to its own method when its run ends. `batch-whole` (the other
   * reading of the vendor's words): a batch's whole server time is charged to the method `batch` when it
   * ends, its commands are not charged to their own methods, and it is `batch` that gets blocked (a direct
   * call is charged to its method as with `run`). `batch-upfront` (a fault: a portal whose books differ from what its answers say): a batch's whole
   * server time is charged when it arrives, to every method it calls, refused commands included.
   * `batch-upfront-no-reset`: the same, and a command refused inside a batch carries no `result_time` (no
   * count, no reset): only the figures of commands that ran and of direct calls tell the count.
   */
  charge?: OperatingCharge;
}

interface Charge {
  /** When the time was charged (ms, sandbox clock); it counts from then until its bucket leaves. */
  at: number;
  sec: number;
}

export interface MethodOperating {
  usedSec: number;
  /** When the oldest bucket with use leaves the window (ms); now + window when there is none. */
  resetAt: number;
}

/** A command refused for its method's operating time: when, and what the portal told it. */
export interface OperatingRefusal extends MethodOperating {
  at: number;
  method: string;
  /** Commands refused: 1, or a whole batch's with `batch-whole`. */
  commands: number;
}

/** Refusals and runs kept for inspection (the oldest are dropped). */
const REFUSALS_KEPT = 2000;
const RUNS_KEPT = 20_000;

export class OperatingTimeLedger {
  private readonly charges = new Map<string, Charge[]>();
  /** Commands refused because their method was blocked. */
  refused = 0;
  readonly refusals: OperatingRefusal[] = [];
  /** Commands that ran, by method, since the last reset (what a bench measures delivery by). */
  readonly ran: Record<string, number> = {};
  /** When the latest commands ran (their start), by method: when delivery resumed after a refusal. */
  readonly runs: { at: number; method: string }[] = [];

  constructor(public performance: OperatingPerformance) {}

  get chargeMode(): OperatingCharge {
    return this.performance.charge ?? 'run';
  }

  /** A batch's server time is charged on arrival (the `batch-upfront` faults). */
  get upfront(): boolean {
    return this.chargeMode === 'batch-upfront' || this.chargeMode === 'batch-upfront-no-reset';
  }

  /** A batch's whole server time is charged to `batch`, not to its commands' methods (`batch-whole`). */
  get batchWhole(): boolean {
    return this.chargeMode === 'batch-whole';
  }

  /**
   * Charges `sec` of server time to `method` at `at` (a command's end, a `batch-whole` batch's end, or a
   * batch's arrival up front).
   */
  charge(method: string, at: number, sec: number): void {
    if (sec <= 0) return;
    const list = this.charges.get(method) ?? [];
    list.push({ at, sec });
    this.charges.set(method, list);
  }

  /**
   * The method's use in the window at `now`: the buckets opened by then that have not left. A bucket is a
   * tenth of the clock's use, opened by the first charge in it (charges made for later moments, a batch's
   * later commands, do not count yet) and leaving at the whole second one window after that charge.
   */
  used(method: string, now: number): MethodOperating {
    const windowMs = this.performance.windowSec * 1000;
    const slice = windowMs / 10;
    const buckets = new Map<number, { openedAt: number; sec: number }>();
    for (const charge of this.prune(method, now)) {
      if (charge.at > now) continue;
      const tenth = Math.floor(charge.at / slice);
      const bucket = buckets.get(tenth);
      if (bucket) {
        bucket.openedAt = Math.min(bucket.openedAt, charge.at);
        bucket.sec += charge.sec;
      } else {
        buckets.set(tenth, { openedAt: charge.at, sec: charge.sec });
      }
    }
    let usedSec = 0;
    let resetAt = Infinity;
    for (const { openedAt, sec } of buckets.values()) {
      const leavesAt = leavesWindowAt(openedAt, windowMs);
      if (leavesAt <= now) continue;
      usedSec += sec;
      resetAt = Math.min(resetAt, leavesAt);
    }
    return {
      usedSec: Math.round(usedSec * 10_000) / 10_000,
      resetAt: resetAt === Infinity ? leavesWindowAt(now, windowMs) : resetAt,
    };
  }

  /** Counts a command of `method` that ran, started at `at`. */
  countRun(method: string, at: number): void {
    this.ran[method] = (this.ran[method] ?? 0) + 1;
    this.runs.push({ at, method });
    if (this.runs.length > RUNS_KEPT) this.runs.splice(0, this.runs.length - RUNS_KEPT);
  }

  blocked(method: string, now: number): boolean {
    return this.used(method, now).usedSec > this.performance.limitSec;
  }

  /** Counts `commands` refused at `now` (a `batch-whole` batch is refused whole); what the refusal reports. */
  refuse(method: string, now: number, commands = 1): MethodOperating {
    const use = this.used(method, now);
    this.refused += commands;
    this.refusals.push({ at: now, method, commands, ...use });
    if (this.refusals.length > REFUSALS_KEPT) this.refusals.shift();
    return use;
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
    this.refusals.length = 0;
    this.runs.length = 0;
    for (const method of Object.keys(this.ran)) delete this.ran[method];
  }

  /** Forgets charges that can count at no moment from a window before `now` on (answers figure the past). */
  private prune(method: string, now: number): Charge[] {
    const list = this.charges.get(method) ?? [];
    const horizon = now - 2 * this.performance.windowSec * 1000;
    // Charges come roughly in time order: the list is filtered only when its first one is old.
    if (list.length === 0 || list[0].at > horizon) return list;
    const kept = list.filter((charge) => charge.at > horizon);
    if (kept.length === 0) this.charges.delete(method);
    else this.charges.set(method, kept);
    return kept;
  }
}

/** When a bucket opened at `openedAt` leaves: one window later, at the whole second (rounded down). */
export function leavesWindowAt(openedAt: number, windowMs: number): number {
  return Math.floor(openedAt / 1000) * 1000 + windowMs;
}
