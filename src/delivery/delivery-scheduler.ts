import { Logger } from '@nestjs/common';
import { CallRecord, CrmBinding, PortalStep } from '../calls/call';
import {
  choosePortalUser,
  countSent,
  markCardHidden,
  markFailed,
  markHoldExpired,
} from '../calls/call-lifecycle';
import { PortalClient } from '../portal/portal-client';
import { PortalError } from '../portal/portal-error';
import { CallStore } from '../store/call-store';
import { DeliveryLease, LeaseLostError } from '../store/coordination-store';
import { BatchPlan, dueSteps } from './batch-plan';
import {
  applyAnswers,
  applyRequestFailure,
  CommandAnswer,
  OutcomeSettings,
  refusedForContent,
} from './delivery-outcome';
import { LeaseKeeper } from './lease-keeper';

export interface SchedulerSettings {
  defaultUserId?: number;
  maxBackoffMs: number;
  /** Refusals of one call's step before it is given up (DELIVERY_MAX_ATTEMPTS). */
  maxAttempts: number;
  /** Batches allowed in flight at once, so a slow portal does not cap the request rate. */
  maxInFlight: number;
  /** How long to wait before trying again a portal that refused the bridge's credentials or rights. */
  pauseMs: number;
}

/** What the CRM module tells delivery about employees and clients (both optional). */
export interface CallRouting {
  /** A user id, null when the loaded directory knows no such active employee, undefined when unknown. */
  employeeFor(extension: string): number | null | undefined;
  /** The CRM client to bind a register to; undefined when binding is off or none is found. */
  bindingFor(phoneE164: string): Promise<CrmBinding | undefined>;
}

/** Told what became of each command, for metrics; kept out of the scheduler's logic. */
export interface DeliveryObserver {
  onCommand(step: PortalStep, outcome: 'delivered' | 'failed' | 'retried'): void;
  onRetry(reason: string): void;
}

/** What the portal's state is, for health details and metrics. */
export interface PortalStatus {
  portalId: string;
  /** Whether this replica holds the portal's delivery lease (only one replica delivers a portal at a time). */
  deliveringHere: boolean;
  paused: boolean;
  pausedReason?: string;
  lastRequestOk?: boolean;
  lastError?: string;
}

/**
 * Delivers one portal's due calls: waits for the request budget, then fills a batch with whatever is due
 * at that moment, marks what it sends in the store, sends, and records each call's outcome. The store is
 * the queue: a crash at any point leaves every step due again, and each step is safe to repeat.
 *
 * Only the replica holding the portal's delivery lease sends; its writes are fenced with the lease, so
 * after a takeover the old holder's late writes are refused (its sends were repeats the portal dedupes).
 */
export class DeliveryScheduler {
  private readonly logger: Logger;
  private readonly inFlight = new Set<string>();
  private readonly running = new Set<Promise<void>>();
  private stopped = false;
  /** Aborted by stop(): the loop's wait for the request budget ends instead of holding shutdown up. */
  private readonly stopping = new AbortController();
  /** The last batch found nothing to send: the loop sleeps instead of asking again at once. */
  private idle = false;
  private loop?: Promise<void>;
  private wake?: () => void;
  private pausedUntil = 0;
  private readonly status: PortalStatus;

  constructor(
    private readonly store: CallStore,
    private readonly client: PortalClient,
    private readonly settings: SchedulerSettings,
    private readonly lease: LeaseKeeper,
    private readonly observer?: DeliveryObserver,
    private readonly routing?: CallRouting,
  ) {
    this.logger = new Logger(`Delivery ${client.portalId}`);
    this.status = { portalId: client.portalId, paused: false, deliveringHere: false };
  }

  start(): void {
    this.lease.start();
    this.loop ??= this.run();
  }

  /** New work may be due: stop sleeping. */
  notify(): void {
    // New work or a freed call: what an empty batch did not find may be there now, so no idle sleep.
    this.idle = false;
    this.wake?.();
  }

  /** New credentials were stored (an install, an authorisation): end a pause now instead of waiting it out. */
  resume(): void {
    this.pausedUntil = 0;
    this.status.paused = false;
    this.status.pausedReason = undefined;
    this.notify();
  }

  portalStatus(): PortalStatus {
    return { ...this.status, deliveringHere: this.lease.current() !== undefined };
  }

  /** Stops taking new batches, waits for the ones in flight to settle, then gives the lease up. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort(new Error('delivery is stopping'));
    this.notify();
    await this.loop;
    await Promise.allSettled([...this.running]);
    await this.lease.stop();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.step();
      } catch (error) {
        this.logger.error(`delivery loop error: ${(error as Error).message}`);
        await this.sleep(1000);
      }
    }
  }

  private async step(): Promise<void> {
    const now = Date.now();
    if (now < this.pausedUntil) return this.sleep(this.pausedUntil - now);
    if (this.running.size >= this.settings.maxInFlight) {
      await Promise.race(this.running);
      return;
    }
    // Without this the loop would take a unit, plan nothing and give it back without ever yielding.
    if (this.idle) {
      this.idle = false;
      return this.sleep(1000);
    }
    // Another replica delivers this portal (or none yet): wait to be told the lease is ours.
    if (!this.lease.current()) return this.sleep(1000);
    const [due] = await this.store.dueCalls(this.client.portalId, now, 1, this.inFlight);
    if (!due) {
      const dueAt = await this.store.nextDueAt(this.client.portalId);
      return this.sleep(dueAt === undefined || dueAt <= now ? 1000 : Math.min(1000, dueAt - now));
    }
    try {
      await this.client.budget.acquire('background', this.stopping.signal);
    } catch (error) {
      if (this.stopped) return;
      throw error;
    }
    const lease = this.lease.current();
    if (this.stopped || !lease) return this.client.budget.refund();
    const batch = this.sendNextBatch(lease).then(
      // A batch that found nothing to do frees nothing: waking the loop for it would only spin.
      (worked) => {
        if (worked) this.notify();
        else this.idle = true;
      },
      (error: Error) => {
        if (error instanceof LeaseLostError) this.lease.lost(error.lease);
        else this.logger.error(`delivery batch error: ${error.message}`);
        this.notify();
      },
    );
    this.running.add(batch);
    void batch.finally(() => this.running.delete(batch));
  }

  /**
   * Plans, marks and sends one batch on the budget unit the loop took; the unit goes back if nothing is
   * sent. Resolves false when it found nothing to send and nothing to park.
   */
  private async sendNextBatch(lease: DeliveryLease): Promise<boolean> {
    const now = Date.now();
    const plan = new BatchPlan(this.client.maxBatchSize);
    // Once the request is handed to the client the unit is spent, whatever the answer.
    const unit = { spent: false };
    try {
      const found = await this.store.dueCalls(
        this.client.portalId,
        now,
        this.client.maxBatchSize,
        this.inFlight,
      );
      // Another batch may have claimed some of these while the store answered (PostgreSQL answers
      // asynchronously): drop them and claim the rest before the next await, so no call is in two batches.
      const due = found.filter((call) => !this.inFlight.has(call.callId));
      const expired: string[] = [];
      // A call that does not fit (a suspect's smaller request) leaves room for later calls that do.
      for (const call of due) {
        if (call.nextStep === 'wait-start') expired.push(call.callId);
        else plan.add(call);
      }
      for (const callId of plan.callIds) this.inFlight.add(callId);
      const parked = expired.length > 0 && (await this.expireHeld(expired, now, lease));
      if (plan.commandCount === 0) return parked;
      const bindings = await this.findBindings(due.filter((call) => plan.callIds.includes(call.callId)));
      await this.deliver(plan, bindings, lease, unit);
      return true;
    } finally {
      for (const callId of plan.callIds) this.inFlight.delete(callId);
      if (!unit.spent) this.client.budget.refund();
    }
  }

  /**
   * Held calls whose start never came are parked. A failure here (other than a lost lease) is logged and
   * the batch goes on: the held calls are tried again with the next batch. Returns whether they were parked.
   */
  private async expireHeld(callIds: string[], now: number, lease: DeliveryLease): Promise<boolean> {
    try {
      await this.store.updateCalls(
        this.client.portalId,
        callIds,
        (call) =>
          call.nextStep === 'wait-start' && (call.dueAt ?? 0) <= now
            ? markHoldExpired(
                call,
                'call.ended arrived without direction/phoneNumber and no call.started came within HOLD_ENDED_WITHOUT_START_SEC',
                now,
              )
            : call,
        lease,
      );
      return true;
    } catch (error) {
      if (error instanceof LeaseLostError) throw error;
      this.logger.error(`could not park ${callIds.length} held calls: ${(error as Error).message}`);
      return false;
    }
  }

  /**
   * With B24_BIND_CRM_ENTITY: the client each first register binds to. A lookup the portal could not answer
   * now is an error for that call (retried later), so a call is never registered unbound by accident.
   */
  private async findBindings(calls: CallRecord[]): Promise<Map<string, CrmBinding | null | PortalError>> {
    const found = new Map<string, CrmBinding | null | PortalError>();
    const routing = this.routing;
    if (!routing) return found;
    const unbound = calls.filter((call) => call.nextStep === 'register' && call.crmBinding === undefined);
    await Promise.all(
      unbound.map(async (call) => {
        try {
          found.set(call.callId, (await routing.bindingFor(call.phoneNumber!)) ?? null);
        } catch (error) {
          if (!(error instanceof PortalError)) throw error;
          found.set(call.callId, error);
        }
      }),
    );
    return found;
  }

  private async deliver(
    plan: BatchPlan,
    bindings: Map<string, CrmBinding | null | PortalError>,
    lease: DeliveryLease,
    unit: { spent: boolean },
  ): Promise<void> {
    const marked = await this.markSending(plan, bindings, lease);
    const sendable = plan.only(new Set(marked.keys()));
    if (sendable.commandCount === 0) return;
    const commands = sendable.commands(marked);
    const settings = this.outcomeSettings();
    try {
      unit.spent = true;
      const outcome = await this.client.batch(commands, { budgetTaken: true });
      this.status.lastRequestOk = true;
      this.status.lastError = undefined;
      this.status.paused = false;
      this.status.pausedReason = undefined;
      const answers = new Map<string, CommandAnswer>(
        commands.map(({ label }) => [
          label,
          { result: outcome.results[label], error: outcome.errors[label] },
        ]),
      );
      const entries = new Map(sendable.entries.map((entry) => [entry.callId, entry.commands]));
      const updated = await this.store.updateCalls(
        this.client.portalId,
        sendable.callIds,
        (call) => applyAnswers(call, entries.get(call.callId)!, answers, settings),
        lease,
      );
      this.report(sendable, answers, updated);
    } catch (error) {
      if (!(error instanceof PortalError)) throw error;
      this.status.lastRequestOk = false;
      this.status.lastError = error.message;
      const refused = refusedForContent(error);
      if (!refused && ['credentials', 'rights', 'method-not-found'].includes(error.kind)) {
        return this.pause(error);
      }
      this.logger.warn(
        refused
          ? `batch of ${commands.length} commands refused, trying its calls in smaller batches: ${error.message}`
          : `batch of ${commands.length} commands failed, retrying later: ${error.message}`,
      );
      for (const { step } of sendable.entries.flatMap((entry) => entry.commands)) {
        this.observer?.onCommand(step, 'retried');
      }
      this.observer?.onRetry(error.kind);
      const entries = new Map(sendable.entries.map((entry) => [entry.callId, entry.commands]));
      const commandCount = sendable.commandCount;
      await this.store.updateCalls(
        this.client.portalId,
        sendable.callIds,
        (call) =>
          applyRequestFailure(call, error, settings, { commandCount, commands: entries.get(call.callId)! }),
        lease,
      );
    }
  }

  private report(plan: BatchPlan, answers: Map<string, CommandAnswer>, updated: CallRecord[]): void {
    if (!this.observer) return;
    const failed = new Set(updated.filter((call) => call.failed).map((call) => call.callId));
    for (const entry of plan.entries) {
      for (const { label, step } of entry.commands) {
        const error = answers.get(label)?.error;
        if (!error) this.observer.onCommand(step, 'delivered');
        else if (error.retryable) {
          this.observer.onCommand(step, 'retried');
          this.observer.onRetry(error.kind);
        } else this.observer.onCommand(step, failed.has(entry.callId) ? 'failed' : 'delivered');
      }
    }
  }

  /**
   * Before sending: fixes the employee each register goes to (a retried register must carry the same one)
   * and counts the commands as sent, so a finish repeated after a lost answer is recognised. The plan was
   * made from a read that may predate another batch's answer: a call whose stored next step is no longer
   * the planned one, or not due yet, is left alone and dropped from this batch.
   */
  private async markSending(
    plan: BatchPlan,
    bindings: Map<string, CrmBinding | null | PortalError>,
    lease: DeliveryLease,
  ): Promise<Map<string, CallRecord>> {
    const steps = new Map(plan.entries.map((entry) => [entry.callId, entry.commands.map((c) => c.step)]));
    const now = Date.now();
    const settings = this.outcomeSettings();
    const retried = new Set<string>();
    const sending = new Set<string>();
    const updated = await this.store.updateCalls(
      this.client.portalId,
      plan.callIds,
      (call) => {
        const planned = steps.get(call.callId) ?? [];
        if (dueSteps(call)[0] !== planned[0] || (call.dueAt ?? Infinity) > now) return call;
        const binding = bindings.get(call.callId);
        if (binding instanceof PortalError) {
          retried.add(call.callId);
          return applyRequestFailure(call, binding, settings);
        }
        if (binding !== undefined && call.crmBinding === undefined) call = { ...call, crmBinding: binding };
        if (call.nextStep === 'register' && !call.portalUser) {
          const choice = choosePortalUser(call, this.settings.defaultUserId, (extension) =>
            this.routing?.employeeFor(extension),
          );
          if (!choice) {
            return markFailed(
              call,
              'no employee for this call: the PBX sent neither extension nor userId, and B24_DEFAULT_USER_ID is not set',
              now,
            );
          }
          call = { ...call, portalUser: choice.user, routedToDefaultUser: choice.routedToDefaultUser };
        }
        if (call.nextStep === 'hide' && !call.cardUserIds) {
          const userId = this.cardUserOf(call);
          if (userId === undefined) {
            return markCardHidden(
              call,
              now,
              `hide: the card of internal number ${call.portalUser?.USER_PHONE_INNER} stays open (no user id known for it)`,
            );
          }
          call = { ...call, cardUserIds: [userId] };
        }
        sending.add(call.callId);
        return countSent(call, planned);
      },
      lease,
    );
    const sendable = updated.filter((call) => sending.has(call.callId));
    return new Map(sendable.map((call) => [call.callId, call]));
  }

  /** The employee the register popped the card for: its USER_ID, or the one with its internal number. */
  private cardUserOf(call: CallRecord): number | undefined {
    const user = call.portalUser;
    if (user?.USER_ID !== undefined) return user.USER_ID;
    const extension = user?.USER_PHONE_INNER;
    return extension === undefined ? undefined : (this.routing?.employeeFor(extension) ?? undefined);
  }

  private pause(error: PortalError): void {
    this.pausedUntil = Date.now() + this.settings.pauseMs;
    this.status.paused = true;
    this.status.pausedReason = error.message;
    this.logger.error(
      `portal ${this.client.portalId} refused the bridge (${error.message}); delivery paused, nothing is dropped. ` +
        `Check the webhook URL and its rights, or re-authorise the application (/oauth/start or reinstall); retrying in ${Math.round(this.settings.pauseMs / 1000)} s`,
    );
  }

  private outcomeSettings(): OutcomeSettings {
    return {
      now: Date.now(),
      defaultUserId: this.settings.defaultUserId,
      maxBackoffMs: this.settings.maxBackoffMs,
      maxAttempts: this.settings.maxAttempts,
    };
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}
