/**
 * The bridge's copy of the portal's leaky bucket (how real portals behave "Rate limit"): the counter rises by one
 * per request and drains `ratePerSec`; a request is sent only when it fits under `burst`. Every request
 * to the portal passes here; interactive ones (lookups for a ringing call) go ahead of background delivery,
 * which still gets one unit in every four while both wait (`BudgetWaiters`).
 * When the portal answers 503 anyway (another application shares its budget), the bucket is taken as
 * full and the drain rate is halved, then recovers as requests succeed.
 *
 * The mirror fills the whole bucket but for the drain of a tenth of a second (`SEND_GUARD_SEC`): the portal
 * counts a request when it arrives, a moment after its grant. It drains a busy stretch from the arrival of
 * the stretch's first request, so that one, when it leaves later than the guard, is counted late and the
 * grants after it wait; a later request arriving late has only drained the longer. A request that leaves on time but is written late, because the event loop
 * was held up in between, is covered by keeping the drain of the loop's recent stalls spare as well
 * (`loop-lag.ts`). The first request of a busy stretch sets when the portal starts draining it: its answer
 * says when it arrived (`time.start`), and the mirror keeps how late it was (`BusyStretches`).
 */
import {
  BudgetPriority,
  BudgetSnapshot,
  BudgetWaiters,
  PortalBudget,
  usableCapacity,
} from './budget-waiters';
import { BudgetIdleWatch } from './budget-idle';
import { BudgetUnit } from './budget-unit';
import { BusyStretches } from './busy-stretch';
import { LoopLag, NO_LOOP_LAG, PROCESS_LOOP_LAG } from './loop-lag';

export type { BudgetPriority, PortalBudget } from './budget-waiters';

/** The bucket of one process (SQLite: one replica). */
export class RequestBudget implements PortalBudget {
  private level = 0;
  private updatedAt: number;
  private slowdown = 1;
  private timer?: NodeJS.Timeout;
  private readonly capacity: number;
  private readonly waiters: BudgetWaiters;
  private readonly idle: BudgetIdleWatch;
  private readonly stretches: BusyStretches;

  constructor(
    private readonly ratePerSec: number,
    burst: number,
    private readonly now: () => number = Date.now,
    /** The process's recent event-loop stalls; a budget on its own clock has none. */
    private readonly loopLag: LoopLag = now === Date.now ? PROCESS_LOOP_LAG : NO_LOOP_LAG,
  ) {
    this.updatedAt = this.now();
    this.capacity = usableCapacity(burst, ratePerSec);
    this.waiters = new BudgetWaiters(this.now, () => this.pump());
    this.idle = new BudgetIdleWatch(this.now);
    this.stretches = new BusyStretches(this.now);
  }

  async acquire(priority: BudgetPriority = 'background', signal?: AbortSignal): Promise<BudgetUnit> {
    const grant = await this.waiters.enqueue(priority, signal);
    return this.stretches.unit(grant, {
      refund: () => this.refund(),
      rate: () => this.effectiveRate(),
      addLate: (extra) => this.addLate(extra),
      // The stretch's first answer may end its reserve: the grants waiting on it are looked at again.
      firstAnswered: () => this.repump(),
    });
  }

  /** A request the portal counts later than the mirror did: `extra` of a unit more in the mirror. */
  private addLate(extra: number): void {
    if (extra === 0) return;
    this.drain();
    this.level += extra;
  }

  /** Gives back a unit taken but not used for a request. */
  refund(): void {
    this.drain();
    this.level = Math.max(0, this.level - 1);
  }

  /** The portal said 503 QUERY_LIMIT_EXCEEDED: its bucket is full, and someone else is draining it too. */
  onRejected(): void {
    this.drain();
    this.level = this.capacity;
    this.slowdown = Math.max(0.25, this.slowdown / 2);
  }

  onAccepted(): void {
    this.slowdown = Math.min(1, this.slowdown + 0.02);
  }

  snapshot(): BudgetSnapshot {
    this.drain();
    return {
      level: this.level,
      ratePerSec: this.effectiveRate(),
      waiting: this.waiters.size,
      waitedMsTotal: this.waiters.waitedMsTotal,
    };
  }

  whenIdle(quietMs: number, latestMs: number, signal?: AbortSignal): Promise<void> {
    return this.idle.whenIdle(quietMs, latestMs, () => this.waiters.size, signal);
  }

  /** The previous runtime's level on top of what this one spent already (both reached the portal). */
  continueFrom(previous: PortalBudget): void {
    if (previous === this) return;
    const { level } = previous.snapshot();
    this.drain();
    this.level = Math.min(this.capacity, this.level + level);
  }

  /** Releases every waiter (shutdown): they proceed and their requests fail or finish on their own. */
  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.waiters.releaseAll();
  }

  private effectiveRate(): number {
    return this.ratePerSec * this.slowdown;
  }

  private drain(): void {
    const now = this.now();
    this.level = Math.max(0, this.level - ((now - this.updatedAt) / 1000) * this.effectiveRate());
    this.updatedAt = now;
  }

  private repump(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.pump();
  }

  private pump(): void {
    if (this.timer) return;
    this.drain();
    // A stall of the loop between a grant and its write sends the request late: keep that drain spare too.
    const lagged = this.capacity - this.loopLag.recentSec() * this.effectiveRate();
    while (this.waiters.next()) {
      const capacity = Math.max(1, lagged - this.stretches.reserve());
      if (this.level + 1 > capacity) {
        const drainMs = Math.ceil(((this.level + 1 - capacity) / this.effectiveRate()) * 1000);
        const waitMs = Math.min(drainMs, this.stretches.reserveEndsInMs() ?? Infinity);
        this.timer = setTimeout(() => {
          this.timer = undefined;
          this.pump();
        }, waitMs);
        return;
      }
      const grant = this.stretches.granted(this.level < 1);
      this.level += 1;
      this.idle.granted();
      this.waiters.grant(grant);
    }
  }
}
