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

  it('grants the burst (less a little headroom) at once and then the drain rate', async () => {
    const budget = new RequestBudget(2, 50, clock);
    const done = await granted(budget, 52);
    expect(done()).toBe(48);
    await jest.advanceTimersByTimeAsync(1000);
    expect(done()).toBe(50);
    await jest.advanceTimersByTimeAsync(1000);
    expect(done()).toBe(52);
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

  it('after a 503 takes the bucket as full and halves its rate', async () => {
    const budget = new RequestBudget(2, 50, clock);
    budget.onRejected();
    const snapshot = budget.snapshot();
    expect(snapshot.level).toBe(48);
    expect(snapshot.ratePerSec).toBe(1);
    const done = await granted(budget, 1);
    expect(done()).toBe(0);
    await jest.advanceTimersByTimeAsync(1000);
    expect(done()).toBe(1);
  });

  it('a refund gives a unit back', async () => {
    const budget = new RequestBudget(2, 1, clock);
    await budget.acquire();
    budget.refund();
    expect(budget.snapshot().level).toBe(0);
  });
});
