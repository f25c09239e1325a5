import { BudgetUnit } from './budget-unit';
import { RequestBudget } from './request-budget';

describe('RequestBudget', () => {
  // Jest's fake timers move Date.now too, so the budget's clock follows the timers.
  const clock = () => Date.now();

  beforeEach(() => {
    jest.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => jest.useRealTimers());

  async function granted(
    budget: RequestBudget,
    count: number,
    priority: 'interactive' | 'background' = 'background',
  ) {
    let done = 0;
    for (let i = 0; i < count; i++) void budget.acquire(priority).then(() => (done += 1));
    await Promise.resolve();
    await Promise.resolve();
    return () => done;
  }

  it("goes on from a rebuilt runtime's budget: the portal's bucket did not empty with it", async () => {
    const previous = new RequestBudget(2, 10, clock);
    await granted(previous, 8);
    await jest.advanceTimersByTimeAsync(1000);
    const next = new RequestBudget(2, 10, clock);
    await granted(next, 1);
    next.continueFrom(previous);
    // 8 less a second's drain (2), and the one the new budget granted itself.
    expect(next.snapshot().level).toBeCloseTo(7, 5);
    next.continueFrom(next);
    expect(next.snapshot().level).toBeCloseTo(7, 5);
  });

  it('grants the whole burst, less a tenth of a second of drain, then the drain rate', async () => {
    const budget = new RequestBudget(2, 50, clock);
    const done = await granted(budget, 53);
    expect(done()).toBe(49);
    // The 50th waits for the 0.2 of a unit the guard keeps: 100 ms at 2 per second.
    await jest.advanceTimersByTimeAsync(95);
    expect(done()).toBe(49);
    await jest.advanceTimersByTimeAsync(10);
    expect(done()).toBe(50);
    await jest.advanceTimersByTimeAsync(1000);
    expect(done()).toBe(52);
    await jest.advanceTimersByTimeAsync(500);
    expect(done()).toBe(53);
  });

  it("keeps the drain of the event loop's recent stalls spare: a request written late still fits", async () => {
    let stallSec = 0.5;
    const budget = new RequestBudget(2, 50, clock, { recentSec: () => stallSec });
    const done = await granted(budget, 50);
    // 49.8 less a 0.5 s stall at 2 per second: 48 fit now.
    expect(done()).toBe(48);
    stallSec = 0;
    await jest.advanceTimersByTimeAsync(600);
    expect(done()).toBe(50);
  });

  it("counts a busy stretch's first request that left late as the portal will: later", async () => {
    const budget = new RequestBudget(2, 10, clock);
    const first = await budget.acquire();
    const after = await budget.acquire();
    // Planning took 350 ms: the portal counts the first 0.35 s after the mirror did, 0.25 s past the
    // guard, and drains the stretch from then.
    await jest.advanceTimersByTimeAsync(350);
    const beforeSpend = budget.snapshot().level;
    first.spend();
    expect(budget.snapshot().level).toBeCloseTo(beforeSpend + 0.5);
    // The one after it, as late: counted later, it has only drained the longer.
    after.spend();
    expect(budget.snapshot().level).toBeCloseTo(beforeSpend + 0.5);
  });

  it("keeps how late the portal took a stretch's first request, as its answer tells", async () => {
    const budget = new RequestBudget(2, 10, clock);
    // The portal's clock is a minute ahead: only the offsets' difference counts.
    const portalClock = () => Date.now() + 60_000;
    const first = await budget.acquire();
    first.spend();
    const second = await budget.acquire();
    second.spend();
    // The second arrived at once, the first 400 ms after its grant: 0.3 s past the guard, 0.6 of a unit.
    second.arrived(portalClock());
    const before = budget.snapshot().level;
    first.arrived(portalClock() + 400);
    expect(budget.snapshot().level).toBeCloseTo(before + 0.6);
  });

  it("keeps a unit spare from a stretch's first request leaving until its answer", async () => {
    const budget = new RequestBudget(2, 10, clock);
    const units: BudgetUnit[] = [];
    const first = await budget.acquire();
    first.spend();
    for (let i = 0; i < 9; i++) void budget.acquire().then((unit) => units.push(unit));
    await jest.advanceTimersByTimeAsync(0);
    // 9.8 less the unit kept for the first answer: 8 with the first.
    expect(units).toHaveLength(7);
    first.arrived(Date.now());
    await jest.advanceTimersByTimeAsync(0);
    expect(units).toHaveLength(8);
  });

  it('keeps that unit a second at most when no answer tells', async () => {
    // Draining next to nothing: only the reserve's end lets more through.
    const budget = new RequestBudget(0.01, 10, clock);
    const first = await budget.acquire();
    first.spend();
    const done = await granted(budget, 10);
    expect(done()).toBe(7);
    await jest.advanceTimersByTimeAsync(50);
    expect(done()).toBe(7);
    // A second after it left: the reserve ends (the drain alone would have let one more through).
    await jest.advanceTimersByTimeAsync(960);
    expect(done()).toBe(9);
  });

  it('serves interactive requests before waiting background ones', async () => {
    const budget = new RequestBudget(1, 1, clock);
    const order: string[] = [];
    await budget.acquire();
    void budget.acquire('background').then(() => order.push('background'));
    void budget.acquire('interactive').then(() => order.push('interactive'));
    await jest.advanceTimersByTimeAsync(2000);
    expect(order).toEqual(['interactive', 'background']);
  });

  it('while lookups keep waiting, background still gets one unit in every four', async () => {
    const budget = new RequestBudget(1, 1, clock);
    await budget.acquire();
    const order: string[] = [];
    for (let i = 0; i < 3; i++) void budget.acquire('background').then(() => order.push('background'));
    // A wave of lookups: always more interactive waiters than units.
    for (let i = 0; i < 12; i++) void budget.acquire('interactive').then(() => order.push('interactive'));
    await jest.advanceTimersByTimeAsync(12_000);
    expect(order).toEqual([
      ...['interactive', 'interactive', 'interactive', 'background'],
      ...['interactive', 'interactive', 'interactive', 'background'],
      ...['interactive', 'interactive', 'interactive', 'background'],
    ]);
  });

  it('with no background waiting, interactive units are not held back', async () => {
    const budget = new RequestBudget(1, 1, clock);
    await budget.acquire();
    const done = await granted(budget, 5, 'interactive');
    await jest.advanceTimersByTimeAsync(5000);
    expect(done()).toBe(5);
  });

  it('after a 503 takes the bucket as full and halves its rate', async () => {
    const budget = new RequestBudget(2, 50, clock);
    budget.onRejected();
    const snapshot = budget.snapshot();
    expect(snapshot.level).toBeCloseTo(49.8);
    expect(snapshot.ratePerSec).toBe(1);
    const done = await granted(budget, 1);
    expect(done()).toBe(0);
    await jest.advanceTimersByTimeAsync(1000);
    expect(done()).toBe(1);
  });

  describe('cancellation', () => {
    it('a waiter whose signal aborts leaves the queue, rejects with the reason and takes no unit', async () => {
      const budget = new RequestBudget(1, 1, clock);
      await budget.acquire();
      const deadline = new AbortController();
      const cancelled = budget.acquire('background', deadline.signal);
      expect(budget.snapshot().waiting).toBe(1);
      deadline.abort(new Error('deadline passed'));
      await expect(cancelled).rejects.toThrow('deadline passed');
      expect(budget.snapshot().waiting).toBe(0);

      // The unit the cancelled waiter would have taken goes to the next one, one drain period later.
      const done = await granted(budget, 1);
      await jest.advanceTimersByTimeAsync(1000);
      expect(done()).toBe(1);
      expect(budget.snapshot().level).toBeCloseTo(1);
    });

    it('an already aborted signal rejects at once without queueing', async () => {
      const budget = new RequestBudget(2, 50, clock);
      const signal = AbortSignal.abort(new Error('too late'));
      await expect(budget.acquire('interactive', signal)).rejects.toThrow('too late');
      expect(budget.snapshot()).toMatchObject({ level: 0, waiting: 0 });
    });

    it('a cancelled interactive waiter does not hold back background ones', async () => {
      const budget = new RequestBudget(1, 1, clock);
      const order: string[] = [];
      await budget.acquire();
      const lookup = new AbortController();
      const interactive = budget.acquire('interactive', lookup.signal).then(
        () => order.push('interactive'),
        () => order.push('interactive cancelled'),
      );
      void budget.acquire('background').then(() => order.push('background'));
      lookup.abort();
      await interactive;
      await jest.advanceTimersByTimeAsync(1000);
      expect(order).toEqual(['interactive cancelled', 'background']);
    });

    it('aborting after the unit was granted changes nothing', async () => {
      const budget = new RequestBudget(2, 50, clock);
      const controller = new AbortController();
      await budget.acquire('interactive', controller.signal);
      controller.abort();
      expect(budget.snapshot()).toMatchObject({ level: 1, waiting: 0 });
    });
  });

  it('a refund gives a unit back', async () => {
    const budget = new RequestBudget(2, 1, clock);
    await budget.acquire();
    budget.refund();
    expect(budget.snapshot().level).toBe(0);
  });
});
