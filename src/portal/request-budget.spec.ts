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

  it('counts a request that left late after its grant as the portal will: later', async () => {
    const budget = new RequestBudget(2, 10, clock);
    const onTime = await budget.acquire();
    onTime.spend();
    expect(budget.snapshot().level).toBeCloseTo(1);
    const late = await budget.acquire();
    // Planning took 350 ms: the portal counts it 0.35 s after the mirror did, 0.25 s past the guard.
    await jest.advanceTimersByTimeAsync(350);
    const beforeSpend = budget.snapshot().level;
    late.spend();
    expect(budget.snapshot().level).toBeCloseTo(beforeSpend + 0.5);
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
