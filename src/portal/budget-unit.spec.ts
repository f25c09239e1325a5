import { BudgetUnit } from './budget-unit';
import { RequestBudget } from './request-budget';

describe('BudgetUnit', () => {
  it('goes back to its bucket once, however often it is given back', () => {
    let refunds = 0;
    const unit = new BudgetUnit(() => (refunds += 1));
    unit.giveBack();
    unit.giveBack();
    expect(refunds).toBe(1);
    expect(unit.held).toBe(false);
    expect(unit.spent).toBe(false);
  });

  it('once spent, is never given back and cannot be spent again', () => {
    let refunds = 0;
    const unit = new BudgetUnit(() => (refunds += 1));
    unit.spend();
    unit.giveBack();
    expect(refunds).toBe(0);
    expect(unit.spent).toBe(true);
    expect(() => unit.spend()).toThrow('already spent');
  });

  it('given back, cannot pay for a request', () => {
    const unit = new BudgetUnit(() => undefined);
    unit.giveBack();
    expect(() => unit.spend()).toThrow('already given-back');
  });

  it('from a RequestBudget: giving it back lowers the level by one, spending it keeps the level', async () => {
    const now = 0;
    const budget = new RequestBudget(1, 10, () => now);
    const kept = await budget.acquire();
    const returned = await budget.acquire();
    expect(budget.snapshot().level).toBe(2);
    returned.giveBack();
    kept.spend();
    kept.giveBack();
    expect(budget.snapshot().level).toBe(1);
    budget.stop();
  });
});
