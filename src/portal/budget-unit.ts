/**
 * One unit of the portal's request budget, taken by `acquire()`: it must end either spent (a request left
 * with it) or given back (nothing was sent), exactly once. Holding it as an object instead of a flag lets
 * every early exit say `giveBack()` in one `finally`, and makes a unit spent twice (two requests counted
 * once) an error instead of a silent overspend.
 */
export class BudgetUnit {
  private state: 'held' | 'spent' | 'given-back' = 'held';

  /**
   * `refund` returns the unit to the bucket it came from; called at most once. `spent`, if given, is told
   * when the request leaves (the bucket may count a late request later).
   */
  constructor(
    private readonly refund: () => void,
    private readonly onSpent?: () => void,
    private readonly onArrived?: (portalAt: number) => void,
  ) {}

  /** Neither spent nor given back yet. */
  get held(): boolean {
    return this.state === 'held';
  }

  get spent(): boolean {
    return this.state === 'spent';
  }

  /** A request leaves on this unit now. A unit already spent or given back cannot pay for another. */
  spend(): void {
    if (this.state !== 'held') throw new Error(`a budget unit already ${this.state} cannot be spent`);
    this.state = 'spent';
    this.onSpent?.();
  }

  /**
   * The portal's answer says when it took the request that left on this unit (`time.start`, the portal's
   * clock, ms): a busy stretch's first request counted late keeps the bucket fuller (`BusyStretches`).
   */
  arrived(portalAt: number): void {
    if (this.state === 'spent' && Number.isFinite(portalAt)) this.onArrived?.(portalAt);
  }

  /** Nothing was sent on it: the bucket gets it back. Safe in any `finally`: a settled unit stays as it is. */
  giveBack(): void {
    if (this.state !== 'held') return;
    this.state = 'given-back';
    this.refund();
  }
}
