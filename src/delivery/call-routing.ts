import { CrmBinding } from '../calls/call';

/** What the CRM module tells delivery about employees and clients (both optional). */
export interface CallRouting {
  /** A user id, null when the loaded directory knows no such active employee, undefined when unknown. */
  employeeFor(extension: string): number | null | undefined;
  /** Delivery needs `employeeFor` to know employees (a card, an unknown internal number): read them now. */
  employeesNeeded?(): void;
  /** The CRM client to bind a register to; undefined when binding is off or none is found. */
  bindingFor(phoneE164: string): Promise<CrmBinding | undefined>;
  /**
   * Missed-call tasks: the client a number belongs to (name, responsible employee), null when none;
   * rejects with a retryable PortalError when the portal cannot be asked now.
   */
  clientFor?(phoneE164: string): Promise<TaskClient | null>;
}

/** Who a missed call's task goes to, from the CRM. */
export interface TaskClient {
  name: string;
  responsibleUserId: number | null;
}
