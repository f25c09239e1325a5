import { PortalError } from '../portal/portal-error';
import { PortalBudget } from '../portal/budget-waiters';
import { CrmMatch } from './crm-match';
import { CrmSearch } from './crm-search';

interface Waiting {
  resolve: (match: CrmMatch | null) => void;
  reject: (error: unknown) => void;
}

/**
 * Lookups at background priority (binding calls for delivery) wait for the budget together, the way
 * delivery fills its batches: when a unit is granted, every number waiting by then shares the request,
 * up to what one batch holds. A backlog of registers then costs a request per dozen numbers, not per call.
 */
export class BackgroundSearches {
  private readonly waiting = new Map<string, Waiting[]>();
  private acquiring = false;

  constructor(
    private readonly search: CrmSearch,
    private readonly budget: PortalBudget,
  ) {}

  find(phone: string): Promise<CrmMatch | null> {
    const problem = this.search.capacityProblem(1);
    if (problem) return Promise.reject(problem);
    return new Promise((resolve, reject) => {
      const callers = this.waiting.get(phone) ?? [];
      callers.push({ resolve, reject });
      this.waiting.set(phone, callers);
      if (!this.acquiring) void this.sendNext();
    });
  }

  private async sendNext(): Promise<void> {
    this.acquiring = true;
    await this.budget.acquire('background');
    this.acquiring = false;
    const phones = [...this.waiting.keys()].slice(0, this.search.numbersPerRequest);
    const callers = new Map(phones.map((phone) => [phone, this.waiting.get(phone) ?? []]));
    phones.forEach((phone) => this.waiting.delete(phone));
    if (this.waiting.size > 0) void this.sendNext();
    try {
      const results = await this.search.find(phones, { priority: 'background', budgetTaken: true });
      for (const [phone, waiting] of callers) {
        const result = results.get(phone) ?? null;
        for (const caller of waiting) {
          if (result instanceof PortalError) caller.reject(result);
          else caller.resolve(result);
        }
      }
    } catch (error) {
      for (const waiting of callers.values()) waiting.forEach((caller) => caller.reject(error));
    }
  }
}
