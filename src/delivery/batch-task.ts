import { CallRecord, withTask } from '../calls/call';
import { plan as replan } from '../calls/call-lifecycle';
import { countTaskAdd, taskGivenUp } from '../calls/missed-call-task';
import { PortalError } from '../portal/portal-error';
import { Bindings, CallMark, MarkContext } from './batch-mark';
import { BatchParty } from './batch-party';
import { CallRouting, TaskClient } from './call-routing';

/** A missed call's task as a batch fixes it before its first add: the CRM client and whom it goes to. */
export class BatchTask {
  /** The CRM client found for a call whose first add is in a batch in flight. */
  private readonly clients = new Map<string, TaskClient | null>();

  constructor(
    private readonly party: BatchParty,
    private readonly routing: CallRouting | undefined,
    private readonly defaultUserId: number | undefined,
  ) {}

  /**
   * The client of each call whose first add is planned (its responsible employee gets the task), kept
   * until the batch settles; a lookup the portal could not answer now is an error beside the bindings.
   */
  async findClients(calls: CallRecord[], found: Bindings): Promise<void> {
    const clientFor = this.routing?.clientFor?.bind(this.routing);
    if (!clientFor) return;
    const first = calls.filter(
      (call) => call.delivery.nextStep === 'addTask' && call.task?.responsibleId === undefined,
    );
    await Promise.all(
      first.map(async (call) => {
        try {
          this.clients.set(call.callId, await clientFor(call.party.phoneNumber!));
        } catch (error) {
          if (!(error instanceof PortalError)) throw error;
          found.set(call.callId, error);
        }
      }),
    );
  }

  /** When the batch settles, not while marking: the mark may be applied twice. */
  forget(callId: string): void {
    this.clients.delete(callId);
  }

  fixResponsible(mark: CallMark, context: MarkContext): CallMark {
    if (mark.steps[0] !== 'addTask') return mark;
    if (this.waitsForEmployees(mark.call)) {
      // The task goes to the call's employee, known so far by internal number only: not to the default
      // employee for want of the directory's first copy (read now, not when the budget is idle).
      return { ...mark, call: this.party.waitForEmployees(mark.call, 'addTask', context.now), stop: true };
    }
    const fixed = this.fixTaskResponsible(mark.call, context.now);
    if (fixed.task?.failed) return { ...mark, call: replan(fixed, context.now), stop: true };
    // Stored with the lookup as its next step: after a crash mid-request, the restart looks first.
    return { ...mark, call: replan(countTaskAdd(fixed, context.now), context.now) };
  }

  /** Whether whom the task goes to hangs on an internal number the directory, not read yet, would name. */
  private waitsForEmployees(call: CallRecord): boolean {
    if (call.task?.responsibleId !== undefined || !this.party.routed) return false;
    if (this.clients.get(call.callId)?.responsibleUserId !== undefined) return false;
    const employee = call.portal.finishUser ?? call.portal.user;
    const extension = employee?.USER_PHONE_INNER;
    return (
      employee?.USER_ID === undefined &&
      extension !== undefined &&
      this.party.employeeFor(extension) === undefined
    );
  }

  /**
   * Whom a missed call's task goes to, fixed before its first add (every repeat and lookup must name the
   * same): the client's responsible employee, else the call's employee, else B24_DEFAULT_USER_ID.
   */
  private fixTaskResponsible(call: CallRecord, now: number): CallRecord {
    const task = call.task!;
    if (task.responsibleId !== undefined) return call;
    const client = this.clients.get(call.callId);
    const employee = call.portal.finishUser ?? call.portal.user;
    const responsibleId =
      client?.responsibleUserId ??
      employee?.USER_ID ??
      (employee?.USER_PHONE_INNER === undefined ? undefined : this.party.cardUserOf(call)) ??
      call.portal.lineTerms?.defaultUserId ??
      this.defaultUserId;
    if (responsibleId === undefined) {
      return taskGivenUp(
        call,
        'addTask: nobody to give the task to (no CRM client, no employee, B24_DEFAULT_USER_ID not set)',
      );
    }
    // A lead the register made for an unknown number is titled after the number: no name worth repeating.
    const clientName = namesClient(client, call) ? client!.name : undefined;
    return { ...withTask(call, { responsibleId, clientName }), updatedAt: now };
  }
}

/** Whether the CRM's name for the client says more than the number already does. */
function namesClient(client: TaskClient | null | undefined, call: CallRecord): boolean {
  return Boolean(client?.name) && !client!.name.includes(call.party.phoneNumber ?? '\u0000');
}
