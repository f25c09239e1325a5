import { Logger } from '@nestjs/common';
import { SharedBucketStore } from '../store/coordination-store';
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

/**
 * The portal's request budget shared by every replica on one database (docs/decisions/replicas.md): each unit is taken from the bucket row in the database, so the sum of all replicas'
 * requests stays within the portal's rate and burst. Across replicas, interactive requests keep a
 * reserve: background work may fill the bucket only up to `capacity - reserve`, so a lookup on any
 * replica finds room even while another replica drains a backlog. Within a replica, waiters are served
 * in priority order as in the local budget, background keeping one unit in every four.
 *
 * When the database cannot be reached no unit is granted (requests wait; lookups reach their deadline
 * and serve their cache): sending without the shared count could overspend the portal.
 */
export class SharedRequestBudget implements PortalBudget {
  private readonly logger = new Logger('RequestBudget');
  private readonly capacity: number;
  private readonly reserve: number;
  private readonly waiters: BudgetWaiters;
  /**
   * From this replica's own grants: one that delivers nothing may find it idle while another fills the
   * bucket, and its start-up request then takes its turn in the shared bucket like any other.
   */
  private readonly idle = new BudgetIdleWatch(Date.now);
  private readonly stretches = new BusyStretches(Date.now);
  private pumping = false;
  private stopped = false;
  private wake?: () => void;
  private lastLevel = 0;
  private lastFactor = 1;
  private lastErrorLoggedAt = 0;

  constructor(
    private readonly store: SharedBucketStore,
    private readonly portalId: string,
    private readonly ratePerSec: number,
    burst: number,
  ) {
    this.capacity = usableCapacity(burst, ratePerSec);
    this.reserve = this.capacity > 4 ? Math.max(1, Math.floor(this.capacity * 0.1)) : 0;
    this.waiters = new BudgetWaiters(Date.now, (priority) => {
      // A new interactive waiter may fit where the background one asleep in the pump does not.
      if (priority === 'interactive') this.wake?.();
      void this.pump();
    });
  }

  async acquire(priority: BudgetPriority = 'background', signal?: AbortSignal): Promise<BudgetUnit> {
    const grant = await this.waiters.enqueue(priority, signal);
    return this.stretches.unit(grant, {
      refund: () => this.refund(),
      rate: () => this.ratePerSec * this.lastFactor,
      addLate: (extra) => this.addLate(extra),
      // The stretch's first answer may end its reserve: a pump asleep on it looks again.
      firstAnswered: () => this.wake?.(),
    });
  }

  /**
   * A request the portal counts later than the shared bucket did (it left late, or it began a busy stretch
   * and arrived late): every replica's next grant waits for the difference (as the local budget does).
   */
  private addLate(extra: number): void {
    if (extra === 0) return;
    this.background(this.store.spentLate(this.portalId, this.ratePerSec, extra));
  }

  refund(): void {
    this.background(this.store.refund(this.portalId, this.ratePerSec));
  }

  onRejected(): void {
    this.lastFactor = Math.max(0.25, this.lastFactor / 2);
    this.background(this.store.rejected(this.portalId, this.ratePerSec, this.capacity, 0.25));
  }

  onAccepted(): void {
    if (this.lastFactor >= 1) return;
    this.lastFactor = Math.min(1, this.lastFactor + 0.02);
    this.background(this.store.accepted(this.portalId, 0.02));
  }

  /** The level as this replica last read it from the database (metrics; no query). */
  snapshot(): BudgetSnapshot {
    return {
      level: this.lastLevel,
      ratePerSec: this.ratePerSec * this.lastFactor,
      waiting: this.waiters.size,
      waitedMsTotal: this.waiters.waitedMsTotal,
    };
  }

  whenIdle(quietMs: number, latestMs: number, signal?: AbortSignal): Promise<void> {
    return this.idle.whenIdle(quietMs, latestMs, () => this.waiters.size, signal);
  }

  stop(): void {
    this.stopped = true;
    this.wake?.();
    this.waiters.releaseAll();
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      for (let priority = this.waiters.next(); priority && !this.stopped; priority = this.waiters.next()) {
        // Less the unit a busy stretch keeps spare until its first answer (`BusyStretches`).
        const spare = this.stretches.reserve();
        const limit = (priority === 'interactive' ? this.capacity : this.capacity - this.reserve) - spare;
        const waitMs = await this.take(limit);
        if (waitMs > 0) {
          await this.sleep(Math.min(waitMs, 1000));
          continue;
        }
        this.idle.granted();
        // The waiter may have given up meanwhile: a unit nobody takes goes back.
        // The level read includes this unit: less than one more means the bucket was empty before it.
        if (!this.waiters.grant(this.stretches.granted(this.lastLevel < 2))) this.refund();
      }
    } finally {
      this.pumping = false;
    }
  }

  private async take(limit: number): Promise<number> {
    try {
      const state = await this.store.take(this.portalId, { ratePerSec: this.ratePerSec, limit });
      this.lastLevel = state.level;
      this.lastFactor = state.factor;
      return state.waitMs;
    } catch (error) {
      this.logFailure(error);
      return 1000;
    }
  }

  private background(work: Promise<unknown>): void {
    work.catch((error: unknown) => this.logFailure(error));
  }

  private logFailure(error: unknown): void {
    if (Date.now() - this.lastErrorLoggedAt < 10_000) return;
    this.lastErrorLoggedAt = Date.now();
    this.logger.warn(`the shared request budget is unreachable, requests wait: ${(error as Error).message}`);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }
}
