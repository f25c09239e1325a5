import type { BudgetUnit } from './budget-unit';

/** Requests waiting for a unit of the portal's request budget, interactive ones ahead of background ones. */
export type BudgetPriority = 'interactive' | 'background';

export interface BudgetSnapshot {
  level: number;
  ratePerSec: number;
  waiting: number;
  waitedMsTotal: number;
}

/** What every request to the portal waits on: a local bucket (one process) or the shared one (replicas). */
export interface PortalBudget {
  /**
   * Resolves when one request may be sent now; the request is counted at that moment. An aborted `signal`
   * takes the waiter out of the queue without a unit and rejects with the signal's reason. The unit must
   * be spent (by the request that leaves on it) or given back.
   */
  acquire(priority?: BudgetPriority, signal?: AbortSignal): Promise<BudgetUnit>;
  /** Gives back a unit taken but not used for a request (what `BudgetUnit.giveBack` calls). */
  refund(): void;
  /** The portal said 503 QUERY_LIMIT_EXCEEDED: its bucket is full, and someone else is draining it too. */
  onRejected(): void;
  onAccepted(): void;
  snapshot(): BudgetSnapshot;
  /**
   * Resolves once the budget has room no waiting work would use (`BudgetIdleWatch`), or after `latestMs`:
   * for requests that buy the calls nothing now. Rejects with the signal's reason when `signal` aborts.
   */
  whenIdle(quietMs: number, latestMs: number, signal?: AbortSignal): Promise<void>;
  /** Releases every waiter (shutdown): they proceed and their requests fail or finish on their own. */
  stop(): void;
  /**
   * The portal's runtime was rebuilt (its settings changed): this budget goes on from the previous one's
   * level, since the portal's bucket did not empty with it. A budget kept in the database has nothing to take.
   */
  continueFrom?(previous: PortalBudget): void;
}

/** What a waiter learns of its unit: the busy stretch it belongs to (`BusyStretches`), and if it begins it. */
export interface StretchGrant {
  stretch: number;
  first: boolean;
}

interface Waiter {
  resolve: (grant: StretchGrant) => void;
  enqueuedAt: number;
}

/** What waiters released at shutdown are told: no stretch. */
const RELEASED: StretchGrant = { stretch: -1, first: false };

/**
 * While both lanes wait, background gets at least one unit in this many: lookups go first, but a wave of
 * them (random numbers missing the cache faster than the portal's rate) cannot stop delivery.
 */
export const BACKGROUND_SHARE_EVERY = 4;

/**
 * The queue part both budgets share: waiters in two priority lanes, cancellation by AbortSignal, and the
 * total time waited (a metric).
 */
export class BudgetWaiters {
  private readonly lanes: Record<BudgetPriority, Waiter[]> = { interactive: [], background: [] };
  /** Interactive units granted since background last got one. */
  private interactiveRun = 0;
  waitedMsTotal = 0;

  constructor(
    private readonly now: () => number,
    private readonly onEnqueue: (priority: BudgetPriority) => void,
  ) {}

  enqueue(priority: BudgetPriority, signal?: AbortSignal): Promise<StretchGrant> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<StretchGrant>((resolve, reject) => {
      const waiter: Waiter = { resolve, enqueuedAt: this.now() };
      if (signal) {
        const cancel = () => {
          const lane = this.lanes[priority];
          const index = lane.indexOf(waiter);
          if (index < 0) return;
          lane.splice(index, 1);
          reject(signal.reason);
        };
        signal.addEventListener('abort', cancel, { once: true });
        waiter.resolve = (grant) => {
          signal.removeEventListener('abort', cancel);
          resolve(grant);
        };
      }
      this.lanes[priority].push(waiter);
      this.onEnqueue(priority);
    });
  }

  /** The priority of the first waiter to serve, or undefined when nobody waits. */
  next(): BudgetPriority | undefined {
    const background = this.lanes.background.length > 0;
    if (background && this.interactiveRun >= BACKGROUND_SHARE_EVERY - 1) return 'background';
    if (this.lanes.interactive.length) return 'interactive';
    return background ? 'background' : undefined;
  }

  /** Hands a unit to the first waiter; false when nobody waits any more. */
  grant(grant: StretchGrant): boolean {
    const priority = this.next();
    if (!priority) return false;
    const waiter = this.lanes[priority].shift()!;
    this.interactiveRun = priority === 'interactive' ? this.interactiveRun + 1 : 0;
    this.waitedMsTotal += this.now() - waiter.enqueuedAt;
    waiter.resolve(grant);
    return true;
  }

  get size(): number {
    return this.lanes.interactive.length + this.lanes.background.length;
  }

  releaseAll(): void {
    for (const waiter of [...this.lanes.interactive, ...this.lanes.background]) waiter.resolve(RELEASED);
    this.lanes.interactive = [];
    this.lanes.background = [];
  }
}

/**
 * How late a busy stretch's first request may leave after its unit was granted (planning, marking it as
 * sent) without the portal draining the stretch later than the mirror does: the mirror keeps this much of
 * the drain (0.2 of a request at 2/s) under the portal's bucket size. A first request that leaves later
 * still is counted late (`lateSpend`), so the next grant waits for it.
 */
export const SEND_GUARD_SEC = 0.1;

/** The level the mirror fills the bucket to: the whole burst, less the drain of `SEND_GUARD_SEC`. */
export function usableCapacity(burst: number, ratePerSec = 2): number {
  return Math.max(1, burst - Math.min(0.5, ratePerSec * SEND_GUARD_SEC));
}

/**
 * What to add to the mirror's level for a request that left `lagMs` after its unit was granted: the drain
 * the mirror counted for it before the portal could, beyond the guard (at most the unit itself).
 */
export function lateSpend(lagMs: number, ratePerSec: number): number {
  const late = lagMs / 1000 - SEND_GUARD_SEC;
  return late > 0 ? Math.min(1, late * ratePerSec) : 0;
}
