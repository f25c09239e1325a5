import { CallRecord, PortalUser, withCard, withDelivery, withParty, withPortal } from '../calls/call';
import {
  cardKey,
  cardKeyOf,
  popsCard,
  samePerson,
  whoOfCardKey,
  withCardUsers,
  withKeys,
} from '../calls/call-card';
import { choosePortalUser, markFailed, plan as replan } from '../calls/call-lifecycle';
import { PortalError } from '../portal/portal-error';
import { CallRouting } from './call-routing';
import { applyRequestFailure } from './delivery-outcome';
import { Bindings, CallMark, MarkContext } from './batch-mark';

/** How long a step waiting for the employee directory's first copy waits before it is looked at again. */
const DIRECTORY_WAIT_MS = 1000;

/**
 * The call's parties as a batch fixes them before sending: the CRM client a register binds to, the
 * employee it goes to, whom finish names, and the portal user of each internal number.
 */
export class BatchParty {
  constructor(
    private readonly routing: CallRouting | undefined,
    private readonly defaultUserId: number | undefined,
  ) {}

  employeeFor(extension: string): number | null | undefined {
    return this.routing?.employeeFor(extension);
  }

  /**
   * The employee directory's first copy is needed (a card names internal numbers, or a register named one
   * the portal does not know): it is read now rather than when the budget is idle.
   */
  needEmployees(): void {
    this.routing?.employeesNeeded?.();
  }

  /**
   * A step of `call` waits for the directory's first copy (read now): tried again in a second, no failure
   * counted (a real one's backoff is not lengthened by it); a parked call keeps why it was parked.
   */
  waitForEmployees(call: CallRecord, step: string, now: number): CallRecord {
    this.needEmployees();
    const lastError = call.delivery.failed
      ? call.delivery.lastError
      : `${step}: waiting for the employee directory`;
    return replan(
      { ...withDelivery(call, { lastError, retryAt: now + DIRECTORY_WAIT_MS }), updatedAt: now },
      now,
    );
  }

  /** Whether the CRM module knows employees at all (without it, internal numbers are never resolved). */
  get routed(): boolean {
    return this.routing !== undefined;
  }

  /**
   * With B24_BIND_CRM_ENTITY: the client each first register binds to. A lookup the portal could not answer
   * now is an error for that call (retried later), so a call is never registered unbound by accident.
   */
  async findBindings(calls: CallRecord[]): Promise<Bindings> {
    const found: Bindings = new Map();
    const routing = this.routing;
    if (!routing) return found;
    const unbound = calls.filter(
      (call) => call.delivery.nextStep === 'register' && call.portal.binding === undefined,
    );
    await Promise.all(
      unbound.map(async (call) => {
        try {
          found.set(call.callId, (await routing.bindingFor(call.party.phoneNumber!)) ?? null);
        } catch (error) {
          if (!(error instanceof PortalError)) throw error;
          found.set(call.callId, error);
        }
      }),
    );
    return found;
  }

  bind(mark: CallMark, context: MarkContext): CallMark {
    const binding = context.bindings.get(mark.call.callId);
    if (binding instanceof PortalError) {
      return { ...mark, call: applyRequestFailure(mark.call, binding, context.settings), stop: true };
    }
    if (binding === undefined || mark.call.portal.binding !== undefined) return mark;
    return { ...mark, call: withPortal(mark.call, { binding }) };
  }

  fixRegister(mark: CallMark, context: MarkContext): CallMark {
    if (mark.call.delivery.nextStep !== 'register') return mark;
    const fixed = this.withCardUsers(this.fixRegisterUser(mark.call, context.now));
    return { ...mark, call: fixed, stop: fixed.delivery.failed };
  }

  fixFinish(mark: CallMark): CallMark {
    if (!mark.steps.includes('finish') || mark.call.portal.finishUser) return mark;
    return { ...mark, call: withPortal(mark.call, { finishUser: this.finishUserOf(mark.call) }) };
  }

  /** The call with the portal user of each internal number among its card keys noted, as far as known. */
  withCardUsers(call: CallRecord): CallRecord {
    const routing = this.routing;
    return routing ? withCardUsers(call, (extension) => routing.employeeFor(extension) ?? undefined) : call;
  }

  /** The employee the register popped the card for: its USER_ID, or the one with its internal number. */
  cardUserOf(call: CallRecord): number | undefined {
    const user = call.portal.user;
    if (user?.USER_ID !== undefined) return user.USER_ID;
    const extension = user?.USER_PHONE_INNER;
    return extension === undefined ? undefined : (this.routing?.employeeFor(extension) ?? undefined);
  }

  /**
   * The employee a register goes to, fixed before its first send (a retried register must carry the same
   * one): whoever answered when the call was answered before it was registered, else the call's employee.
   * The card key of that employee is kept; with SHOW=1 the card may be open for them from now on.
   */
  private fixRegisterUser(call: CallRecord, now: number): CallRecord {
    if (!call.portal.user) {
      const chooser = call.party.answeredBy ? withParty(call, whoOfCardKey(call.party.answeredBy)) : call;
      // The line's own default employee (LINES) before B24_DEFAULT_USER_ID.
      const fallback = call.portal.lineTerms?.defaultUserId ?? this.defaultUserId;
      const choice = choosePortalUser(chooser, fallback, (extension) => this.routing?.employeeFor(extension));
      if (!choice) {
        return markFailed(
          call,
          'no employee for this call: the PBX sent neither extension nor userId, and B24_DEFAULT_USER_ID is not set',
          now,
        );
      }
      const key = choice.routedToDefaultUser
        ? cardKeyOf(choice.user)
        : cardKey(chooser.party.extension, chooser.party.userId);
      call = withPortal(call, { user: choice.user, routedToDefaultUser: choice.routedToDefaultUser });
      call = withCard(call, { registerKey: key });
    } else if (call.portal.routedToDefaultUser || call.card.registerKey === undefined) {
      call = withCard(call, { registerKey: cardKeyOf(call.portal.user) });
    }
    if (popsCard(call) && call.card.registerKey) {
      call = withCard(call, { maybe: withKeys(call.card.maybe, [call.card.registerKey]) });
    }
    return call;
  }

  /** Whom finish names: whoever answered last when the portal knows them, else the register's employee. */
  private finishUserOf(call: CallRecord): PortalUser | undefined {
    const answerer = call.party.answeredBy;
    // A click-to-call's report that names nobody (the dialer's timeout): B24_DEFAULT_USER_ID.
    const defaultUserId = call.portal.lineTerms?.defaultUserId ?? this.defaultUserId;
    const fallback = call.portal.clickToCall && defaultUserId !== undefined;
    if (!answerer && !call.portal.user && fallback) return { USER_ID: defaultUserId };
    if (!answerer || (call.card.registerKey && samePerson(call, answerer, call.card.registerKey))) {
      return call.portal.user;
    }
    const who = whoOfCardKey(answerer);
    if (who.userId !== undefined) return { USER_ID: who.userId };
    const userId = this.routing?.employeeFor(who.extension!);
    if (typeof userId === 'number') return { USER_ID: userId };
    return userId === null ? call.portal.user : { USER_PHONE_INNER: who.extension };
  }
}
