import { lateSpend, SEND_GUARD_SEC, StretchGrant } from './budget-waiters';
import { BudgetUnit } from './budget-unit';

/**
 * The portal drains a busy stretch of requests (from an empty bucket until it is empty again) from the
 * arrival of its first request, and the mirror from that request's grant. When the first one arrives later
 * than those after it (a bridge just started: a first connection, a first plan; a portal slow to take the
 * first of a burst), the portal's level stays above the mirror's by the drain of the difference for the
 * whole stretch, and the burst's last unit would leave a little too early (a 503).
 *
 * Each answer says when the portal took its request (`time.start`, the portal's clock): against its grant
 * (the bridge's clock) that is an offset whose unknown part, the clocks' difference, is the same for
 * every request, so the first request's offset less the least of the stretch is how much later it arrived.
 * That much drain beyond the guard the mirror keeps anyway (`SEND_GUARD_SEC`) is owed to it (at most a
 * unit), less what `lateSpend` added for its slow leaving. From the first request's leaving until its answer
 * says (at most `FIRST_ANSWER_WAIT_MS`), the stretch keeps that unit spare (`reserve`): a burst's last unit
 * waits for the answer, the bucket's drain and so the stretch's pace do not.
 */
export class BusyStretches {
  private current = 0;
  /** Until when the current stretch's first request, sent, may still be unanswered (0: none on its way). */
  private firstPendingUntil = 0;
  private firstOffset?: number;
  private leastOffset = Infinity;
  /** Units the current stretch's correction added so far (with the first request's `lateSpend`). */
  private added = 0;

  constructor(private readonly now: () => number) {}

  /** A unit was granted; one granted with less than a unit in the bucket starts a stretch. Its stretch. */
  granted(fromEmpty: boolean): StretchGrant {
    if (!fromEmpty) return { stretch: this.current, first: false };
    this.current += 1;
    this.firstPendingUntil = 0;
    this.firstOffset = undefined;
    this.leastOffset = Infinity;
    this.added = 0;
    return { stretch: this.current, first: true };
  }

  /**
   * The first request of a stretch left, `lateSpend` adding `units` for how late: until its answer the
   * stretch keeps a unit spare.
   */
  sent(grant: StretchGrant, units: number): void {
    if (grant.stretch !== this.current) return;
    this.added += units;
    this.firstPendingUntil = this.now() + FIRST_ANSWER_WAIT_MS;
  }

  /**
   * The portal took a request of `grant` at `portalAt` (its clock, ms), granted at `grantedAt` (the
   * bridge's): the units the mirror owes the current stretch beyond what it added already.
   */
  arrived(grant: StretchGrant, grantedAt: number, portalAt: number, ratePerSec: number): number {
    if (grant.stretch !== this.current) return 0;
    const offset = portalAt - grantedAt;
    if (grant.first) {
      this.firstOffset = offset;
      this.firstPendingUntil = 0;
    }
    this.leastOffset = Math.min(this.leastOffset, offset);
    if (this.firstOffset === undefined) return 0;
    const late = (this.firstOffset - this.leastOffset) / 1000 - SEND_GUARD_SEC;
    const owed = Math.min(1, Math.max(0, late) * ratePerSec);
    if (owed <= this.added) return 0;
    const extra = owed - this.added;
    this.added = owed;
    return extra;
  }

  /**
   * The unit of `grant`, granted now, as a budget keeps it: `addLate` told what the portal counts later than
   * the budget did, `firstAnswered` when the stretch's first answer came (its reserve may end).
   */
  unit(
    grant: StretchGrant,
    budget: {
      refund(): void;
      rate(): number;
      addLate(extra: number): void;
      firstAnswered(): void;
    },
  ): BudgetUnit {
    const grantedAt = this.now();
    return new BudgetUnit(
      () => budget.refund(),
      () => {
        // Only a stretch's first request counts late for good: the portal drains the stretch from its
        // arrival, and one after it that arrives late has only drained the longer when it is counted.
        if (!grant.first) return;
        const extra = lateSpend(this.now() - grantedAt, budget.rate());
        this.sent(grant, extra);
        budget.addLate(extra);
      },
      (portalAt) => {
        budget.addLate(this.arrived(grant, grantedAt, portalAt, budget.rate()));
        if (grant.first) budget.firstAnswered();
      },
    );
  }

  /** The units kept spare now: one while the stretch's first answer is awaited. */
  reserve(): number {
    return this.now() < this.firstPendingUntil ? 1 : 0;
  }

  /** When the reserve ends at the latest (ms from now), or undefined when none is kept. */
  reserveEndsInMs(): number | undefined {
    const left = this.firstPendingUntil - this.now();
    return left > 0 ? left : undefined;
  }
}

/** The longest a stretch's first answer is waited for (one lost or slow says nothing of its arrival). */
export const FIRST_ANSWER_WAIT_MS = 1000;
