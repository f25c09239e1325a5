import { CallRecord, CrmBinding, PortalStep } from '../calls/call';
import { PortalError } from '../portal/portal-error';
import { OutcomeSettings } from './delivery-outcome';

/** The CRM client each call's first register binds to; a PortalError when the portal could not say now. */
export type Bindings = Map<string, CrmBinding | null | PortalError>;

/**
 * A call as one part of it (party, card, task) left it while a batch marks it for sending: the steps that
 * still go, or `stop` when the call is stored as it is now and not sent in this batch.
 */
export interface CallMark {
  call: CallRecord;
  steps: PortalStep[];
  stop?: boolean;
}

/** What every part's marking of one call reads: the steps planned, the time, the batch's lookups. */
export interface MarkContext {
  planned: PortalStep[];
  now: number;
  bindings: Bindings;
  settings: OutcomeSettings;
}
