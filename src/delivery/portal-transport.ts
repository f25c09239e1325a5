import { WireCommand } from '../calls/step-planner';
import { BudgetUnit } from '../portal/budget-unit';
import { PortalBudget } from '../portal/budget-waiters';
import { OperatingTime } from '../portal/operating-time';
import { BatchOutcome } from '../portal/portal-client';

/**
 * What delivery needs of the portal: its budget and one `batch` request paid with a unit taken from it.
 * `PortalClient` is the implementation; specs give the loop a scripted one at this HTTP-free boundary.
 * `batch` settles the unit: spent when the request leaves, given back when nothing was sent.
 */
export interface PortalTransport {
  readonly portalId: string;
  readonly maxBatchSize: number;
  readonly budget: PortalBudget;
  /** Each method's server time against the portal's operating limit; absent: not paced. */
  readonly operating?: OperatingTime;
  /** `timeoutMs`: this request's own timeout (one carrying files gets longer: it scales with their bytes). */
  batch(commands: WireCommand[], options: { unit: BudgetUnit; timeoutMs?: number }): Promise<BatchOutcome>;
}
