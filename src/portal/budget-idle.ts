/**
 * When the portal's request budget has room no waiting work would use (both budgets keep one): nothing was
 * granted for a quiet while and nobody waits for a unit. Requests the calls do not need (the employee
 * directory's first read, the start's binding check, adding lines) wait for it: sent while a backlog fills
 * the bucket, each would cost the calls a request's worth of time (0.5 s at 2/s).
 */
export class BudgetIdleWatch {
  private lastGrantAt: number;

  constructor(private readonly now: () => number) {
    this.lastGrantAt = now();
  }

  granted(): void {
    this.lastGrantAt = this.now();
  }

  /**
   * Resolves once no unit was granted for `quietMs` and `waiting()` is 0, or `latestMs` from now whatever
   * the budget does (a portal that is never quiet still gets them). The quiet while counts from the
   * watch's start too, so calls arriving just after start-up are seen first. Rejects with the signal's
   * reason when `signal` aborts.
   */
  async whenIdle(
    quietMs: number,
    latestMs: number,
    waiting: () => number,
    signal?: AbortSignal,
  ): Promise<void> {
    const latest = this.now() + latestMs;
    for (;;) {
      if (signal?.aborted) throw signal.reason;
      const now = this.now();
      const quietIn = this.lastGrantAt + quietMs - now;
      if ((quietIn <= 0 && waiting() === 0) || now >= latest) return;
      await pause(Math.min(Math.max(quietIn, MIN_LOOK_MS), latest - now), signal);
    }
  }
}

/**
 * How long the budget must go without a grant before a start-up request leaves (`whenIdle`): calls posted
 * just after the bridge started, or waiting in its store, take the burst first.
 */
export const START_UP_QUIET_MS = 2000;

/** A start-up request leaves this long after the bridge started at the latest, however busy the portal. */
export const START_UP_LATEST_MS = 60_000;

/** While someone waits for a unit, the watch looks again this often. */
const MIN_LOOK_MS = 250;

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = () => {
      signal?.removeEventListener('abort', aborted);
      resolve();
    };
    const aborted = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(done, ms);
    timer.unref();
    signal?.addEventListener('abort', aborted, { once: true });
  });
}
