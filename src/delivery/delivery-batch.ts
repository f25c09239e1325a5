import { Logger } from '@nestjs/common';
import { CallRecord, CrmBinding, PortalStep, PortalUser } from '../calls/call';
import {
  cardKey,
  cardKeyOf,
  cardMoves,
  popsCard,
  ringGroupRest,
  samePerson,
  userIdOfCardKey,
  whoOfCardKey,
  withCardUsers,
  withKeys,
} from '../calls/call-card';
import {
  choosePortalUser,
  countSent,
  dropCardKeys,
  markCardHidden,
  markFailed,
  markHoldExpired,
  markRetry,
  plan as replan,
} from '../calls/call-lifecycle';
import { BatchLimits, BatchPlan, dueSteps, planBatch, STEP_KINDS } from '../calls/step-planner';
import { countTaskAdd, taskGivenUp } from '../calls/missed-call-task';
import { BudgetUnit } from '../portal/budget-unit';
import { OperatingReservation } from '../portal/operating-time';
import { PortalError } from '../portal/portal-error';
import { CallStore } from '../store/call-store';
import { DeliveryLease, LeaseLostError } from '../store/coordination-store';
import {
  applyAnswers,
  applyRequestFailure,
  CommandAnswer,
  OutcomeSettings,
  refusedForContent,
} from './delivery-outcome';
import { PortalTransport } from './portal-transport';
import { RecordingDelivery } from './recording-delivery';

export interface BatchSettings {
  defaultUserId?: number;
  maxBackoffMs: number;
  /** Refusals of one call's step before it is given up (DELIVERY_MAX_ATTEMPTS). */
  maxAttempts: number;
  /** Bytes of commands per request (default: the planner's DEFAULT_MAX_BATCH_BYTES). */
  maxBatchBytes?: number;
  /** File content bytes per request (RECORDING_REQUEST_MAX_MB; default: DEFAULT_MAX_PAYLOAD_BYTES). */
  maxPayloadBytes?: number;
}

/** What the CRM module tells delivery about employees and clients (both optional). */
export interface CallRouting {
  /** A user id, null when the loaded directory knows no such active employee, undefined when unknown. */
  employeeFor(extension: string): number | null | undefined;
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

/** Told what became of each command, for metrics; kept out of delivery's logic. */
export interface DeliveryObserver {
  onCommand(step: PortalStep, outcome: 'delivered' | 'failed' | 'retried'): void;
  onRetry(reason: string): void;
  /** A ringing call's register popped its card this long after the call was first stored. */
  onCardPopped?(elapsedMs: number): void;
}

/**
 * What the portal said to a batch, told to the loop the moment it is known (before the answers are
 * stored): `pause` when it refused the bridge itself (credentials, rights), so delivery pauses.
 */
export type PortalAnswer =
  { ok: true; elapsedMs: number } | { ok: false; error: PortalError; pause: boolean; elapsedMs: number };

/**
 * What one batch did: sent (or parked held calls), found nothing, or found work it may not send before
 * `until` because the portal's operating-time limit has no room for its methods. `worked` with `settled`
 * when the portal answered and every call of the request was written with no step due, now or later: the
 * batch left nothing behind for the loop to look for.
 */
export type BatchResult =
  { kind: 'worked'; settled?: boolean } | { kind: 'idle' } | { kind: 'paced'; until: number };

/**
 * What the loop hears once a batch has claimed its calls: `drained` when it read fewer calls than it
 * asked for and planned every one of them, so nothing else was due (unclaimed) when it read.
 */
export interface PlannedBatch {
  drained: boolean;
}

/** A card move naming internal numbers waits this long for the employee directory's first copy. */
const DIRECTORY_WAIT_MS = 1000;

/** Calls looked at per request: twice a request's worth, so calls dropped while planning leave it full. */
const CANDIDATES_PER_COMMAND = 2;

/** The steps whose own method is one of `methods` (a call whose next step it is cannot go now). */
function stepsOf(methods: readonly string[]): PortalStep[] {
  return (Object.keys(STEP_KINDS) as PortalStep[]).filter((step) =>
    methods.includes(STEP_KINDS[step].method),
  );
}

/**
 * A method nearly at its operating limit goes in requests of at least this many of its commands (or fewer
 * when the request is smaller), not a command at a time as its old use leaves the window.
 */
const MIN_PACED_COMMANDS = 10;

type Bindings = Map<string, CrmBinding | null | PortalError>;

/**
 * One batch, from the due calls to the stored answers (what BullMQ's `process` or a Temporal activity is
 * to their worker's loop): plan with `planBatch`, fix employees and count the commands as sent, send on the
 * budget unit the loop took, apply each answer. The loop decides when; this decides nothing about time.
 */
export class DeliveryBatches {
  private readonly logger: Logger;
  /** Missed-call tasks: the CRM client found for a call whose first add is in this batch. */
  private readonly taskClients = new Map<string, TaskClient | null>();
  /** Planning is one at a time, so each batch sees the calls the batches before it claimed. */
  private planning: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: CallStore,
    private readonly transport: PortalTransport,
    private readonly settings: BatchSettings,
    private readonly observer?: DeliveryObserver,
    private readonly routing?: CallRouting,
    /** Recordings the bridge downloads and uploads itself (docs/API.md); without it they are not fetched. */
    private readonly recordings?: RecordingDelivery,
  ) {
    this.logger = new Logger(`Delivery ${transport.portalId}`);
  }

  /**
   * Plans, marks and sends one batch on `unit`; the unit is given back if nothing is sent. `claimed` holds
   * the calls of batches in flight: this batch skips them and claims its own until it settles. `onPlanned`
   * is told once its calls are claimed (the loop takes the next unit only then). Says whether it sent,
   * found nothing, or found work that waits for the portal's operating time.
   */
  async send(
    lease: DeliveryLease,
    unit: BudgetUnit,
    claimed: Set<string>,
    onAnswer: (answer: PortalAnswer) => void,
    onPlanned?: (planned: PlannedBatch) => void,
    /** The loop's own look (`CallStore.lookDue`), when it read a batch's `candidates()`: planned from. */
    looked?: CallRecord[],
  ): Promise<BatchResult> {
    const now = Date.now();
    let plan: BatchPlan | undefined;
    let reservation: OperatingReservation | undefined;
    try {
      const planned = await this.plan(now, claimed, looked);
      onPlanned?.({ drained: planned.drained });
      plan = planned.plan;
      reservation = planned.reservation;
      const parked =
        planned.expiredHolds.length > 0 && (await this.expireHeld(planned.expiredHolds, now, lease));
      const fetching =
        planned.fetches.length > 0 && this.recordings !== undefined
          ? await this.recordings.startFetches(planned.fetches, lease)
          : false;
      if (plan.commandCount === 0) {
        if (parked || fetching) return { kind: 'worked' };
        return planned.pacedUntil === undefined
          ? { kind: 'idle' }
          : { kind: 'paced', until: planned.pacedUntil };
      }
      const calls = new Set(plan.callIds);
      const inPlan = planned.due.filter((call) => calls.has(call.callId));
      const bindings = await this.findBindings(inPlan);
      await this.findTaskClients(inPlan, bindings);
      const settled = await this.deliver(plan, inPlan, bindings, lease, unit, onAnswer);
      return { kind: 'worked', settled: settled && !parked && !fetching };
    } finally {
      if (reservation) this.transport.operating?.release(reservation);
      for (const callId of plan?.callIds ?? []) {
        claimed.delete(callId);
        this.taskClients.delete(callId);
      }
      unit.giveBack();
    }
  }

  /**
   * Looks at the due calls not claimed by a batch in flight, plans one request and claims its calls, one
   * batch at a time: the store answers asynchronously (PostgreSQL), and a batch planning from a read made
   * before another claimed its calls would send them twice at once. The plan's expected server time is set
   * aside under the operating limit before the next batch plans.
   */
  private plan(now: number, claimed: Set<string>, looked?: CallRecord[]) {
    const next = this.planning.then(async () => {
      const limits = this.limits();
      const candidates = this.candidates();
      // The loop's look, read for as many as this read would ask (`claimed` is applied again). A stale copy
      // is safe: markSending writes only calls still at the planned step.
      const found = looked ?? (await this.store.dueCalls(this.transport.portalId, now, candidates, claimed));
      let due = found.filter((call) => !claimed.has(call.callId));
      let { plan, expiredHolds, fetches } = planBatch(due, limits);
      // A step without operating-time room can fill the candidates (thousands of registers waiting while
      // finishes have room): look again without the calls whose next step waits, so the request still
      // fills with what may go.
      const exhausted = new Set(plan.exhaustedMethods());
      const waiting = stepsOf([...exhausted]);
      if (
        plan.commandCount < this.transport.maxBatchSize &&
        found.length === candidates &&
        waiting.length > 0
      ) {
        const seen = new Set(due.map((call) => call.callId));
        const more = await this.store.dueCalls(this.transport.portalId, now, candidates, claimed, waiting);
        due = [...due, ...more.filter((call) => !claimed.has(call.callId) && !seen.has(call.callId))];
        ({ plan, expiredHolds, fetches } = planBatch(due, limits));
        for (const method of plan.exhaustedMethods()) exhausted.add(method);
      }
      for (const callId of plan.callIds) claimed.add(callId);
      const operating = this.transport.operating;
      const reservation =
        operating && plan.commandCount > 0 ? operating.reserve(plan.commandsByMethod()) : undefined;
      let pacedUntil: number | undefined;
      if (operating && plan.commandCount === 0) {
        const minUseful = this.minPacedCommands();
        for (const method of exhausted) {
          const at = operating.nextRoomAt(method, minUseful);
          if (at !== undefined) pacedUntil = Math.min(pacedUntil ?? Infinity, at);
        }
      }
      const drained =
        plan.commandCount > 0 &&
        found.length < candidates &&
        expiredHolds.length === 0 &&
        fetches.length === 0 &&
        due.every((call) => claimed.has(call.callId));
      return { plan, expiredHolds, fetches, due, reservation, pacedUntil, drained };
    });
    this.planning = next.catch(() => undefined);
    return next;
  }

  /** Calls a batch reads to plan one request: twice a request's worth. */
  candidates(): number {
    return this.transport.maxBatchSize * CANDIDATES_PER_COMMAND;
  }

  private limits(): BatchLimits {
    const operating = this.transport.operating;
    const minUseful = this.minPacedCommands();
    return {
      maxCommands: this.transport.maxBatchSize,
      maxBytes: this.settings.maxBatchBytes,
      maxPayloadBytes: this.settings.maxPayloadBytes,
      allowance: operating && ((method) => operating.allowance(method, minUseful)),
    };
  }

  private minPacedCommands(): number {
    return Math.min(MIN_PACED_COMMANDS, this.transport.maxBatchSize);
  }

  /**
   * Held calls whose start never came are parked. A failure here (other than a lost lease) is logged and
   * the batch goes on: the held calls are tried again with the next batch. Returns whether they were parked.
   */
  private async expireHeld(callIds: string[], now: number, lease: DeliveryLease): Promise<boolean> {
    try {
      await this.store.updateCalls(
        this.transport.portalId,
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
  private async findBindings(calls: CallRecord[]): Promise<Bindings> {
    const found: Bindings = new Map();
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

  /**
   * Missed-call tasks: the client of each call whose first add is planned (its responsible employee gets
   * the task), kept beside the bindings; a lookup the portal could not answer now is retried later.
   */
  private async findTaskClients(calls: CallRecord[], found: Bindings): Promise<void> {
    const clientFor = this.routing?.clientFor?.bind(this.routing);
    if (!clientFor) return;
    const first = calls.filter(
      (call) => call.nextStep === 'addTask' && call.missedTask?.responsibleId === undefined,
    );
    await Promise.all(
      first.map(async (call) => {
        try {
          this.taskClients.set(call.callId, await clientFor(call.phoneNumber!));
        } catch (error) {
          if (!(error instanceof PortalError)) throw error;
          found.set(call.callId, error);
        }
      }),
    );
  }

  private async deliver(
    plan: BatchPlan,
    read: CallRecord[],
    bindings: Bindings,
    lease: DeliveryLease,
    unit: BudgetUnit,
    onAnswer: (answer: PortalAnswer) => void,
  ): Promise<boolean> {
    const { calls: marked, steps } = await this.markSending(plan, read, bindings, lease);
    const sendable = plan.only(steps);
    if (sendable.commandCount === 0) return false;
    const commands = sendable.commands(marked);
    // Recordings' content is read only now, for this request's commands.
    const lost = (await this.recordings?.fillContent(sendable, commands, marked)) ?? new Map();
    const settings = this.outcomeSettings();
    const entries = new Map(sendable.entries.map((entry) => [entry.callId, entry.commands]));
    const sentAt = Date.now();
    try {
      const outcome = await this.transport.batch(commands, {
        unit,
        timeoutMs: this.recordings?.requestTimeoutMs(commands),
      });
      onAnswer({ ok: true, elapsedMs: Date.now() - sentAt });
      const answers = new Map<string, CommandAnswer>(
        commands.map(({ label }) => [
          label,
          lost.get(label) ?? { result: outcome.results[label], error: outcome.errors[label] },
        ]),
      );
      await this.recordings?.postToUploadUrls(sendable, marked, answers, lease);
      // From the calls as marked: unless something else wrote them since, one statement.
      const updated = await this.store.updateCallsFrom(
        this.transport.portalId,
        sendable.callIds.map((callId) => marked.get(callId)!),
        (call) =>
          applyAnswers(
            call,
            RecordingDelivery.current(call, marked.get(call.callId), entries.get(call.callId)!),
            answers,
            settings,
          ),
        lease,
      );
      this.report(sendable, answers, updated);
      this.logOutcomes(marked, updated);
      await this.recordings?.forget(updated);
      // Every call planned was sent and written, and none has a step due: nothing of this request is left.
      return (
        sendable.commandCount === plan.commandCount &&
        updated.length === sendable.callIds.length &&
        updated.every((call) => call.dueAt === undefined)
      );
    } catch (error) {
      if (!(error instanceof PortalError)) throw error;
      const refused = refusedForContent(error);
      const pause = !refused && ['credentials', 'rights', 'method-not-found'].includes(error.kind);
      onAnswer({ ok: false, error, pause, elapsedMs: Date.now() - sentAt });
      if (pause) return false;
      this.logger.warn(
        refused
          ? `batch of ${commands.length} commands refused, trying its calls in smaller batches: ${error.message}`
          : `batch of ${commands.length} commands failed, retrying later: ${error.message}`,
      );
      for (const { step } of sendable.entries.flatMap((entry) => entry.commands)) {
        this.observer?.onCommand(step, 'retried');
      }
      this.observer?.onRetry(error.kind);
      const commandCount = sendable.commandCount;
      const updated = await this.store.updateCallsFrom(
        this.transport.portalId,
        sendable.callIds.map((callId) => marked.get(callId)!),
        (call) =>
          applyRequestFailure(call, error, settings, { commandCount, commands: entries.get(call.callId)! }),
        lease,
      );
      this.logOutcomes(marked, updated);
      // An upload given up (it kept timing out) leaves the store too.
      await this.recordings?.forget(updated);
      return false;
    }
  }

  /**
   * One line per call this batch moved on: finished on the portal (info; registered: debug), or given up
   * (warn, with the portal's words). Ids, state and reason only: nothing here carries a credential.
   */
  private logOutcomes(before: Map<string, CallRecord>, updated: CallRecord[]): void {
    for (const call of updated) {
      const was = before.get(call.callId);
      if (!was || (was.state === call.state && was.failed === call.failed)) continue;
      const ids = { callId: call.callId, portalCallId: call.portalCallId ?? null, state: call.state };
      if (call.failed) {
        this.logger.warn(
          { ...ids, reason: call.lastError ?? null },
          `call ${call.callId} failed: ${call.lastError}`,
        );
      } else if (call.state === 'finished') {
        this.logger.log(ids, `call ${call.callId} delivered: finished on the portal as ${call.portalCallId}`);
      } else if (call.state === 'registered') {
        this.logger.debug(ids, `call ${call.callId} registered on the portal as ${call.portalCallId}`);
      }
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
    const now = Date.now();
    for (const call of updated) {
      const registered = plan.entries.find((entry) => entry.callId === call.callId)?.commands[0].step;
      if (
        registered === 'register' &&
        call.portalCallId &&
        call.cardShown?.includes(call.cardRegisterKey ?? '')
      ) {
        this.observer.onCardPopped?.(now - call.createdAt);
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
    read: CallRecord[],
    bindings: Bindings,
    lease: DeliveryLease,
  ): Promise<{ calls: Map<string, CallRecord>; steps: Map<string, PortalStep[]> }> {
    const steps = new Map(plan.entries.map((entry) => [entry.callId, entry.commands.map((c) => c.step)]));
    const now = Date.now();
    const settings = this.outcomeSettings();
    const sending = new Map<string, PortalStep[]>();
    const byId = new Map(read.map((call) => [call.callId, call]));
    // From the calls as planned (one statement unless intake wrote some since; those are read again, so
    // this may run twice for a call: only what it did to the copy written counts).
    const updated = await this.store.updateCallsFrom(
      this.transport.portalId,
      plan.callIds.flatMap((callId) => byId.get(callId) ?? []),
      (call) => {
        sending.delete(call.callId);
        const planned = steps.get(call.callId) ?? [];
        if (dueSteps(call)[0] !== planned[0] || (call.dueAt ?? Infinity) > now) return call;
        const binding = bindings.get(call.callId);
        if (binding instanceof PortalError) return applyRequestFailure(call, binding, settings);
        if (binding !== undefined && call.crmBinding === undefined) call = { ...call, crmBinding: binding };
        // The card follows people, not spellings: with the employees of the card keys known, the moves the
        // plan was read with may change (an answer by userId within a ring group shown by extension).
        const known = this.withCardUsers(call);
        if (known !== call) {
          call = replan(known, now);
          if (dueSteps(call)[0] !== planned[0]) return call;
        }
        if (call.nextStep === 'register') {
          const fixed = this.withCardUsers(this.fixRegisterUser(call, now));
          if (fixed.failed) return fixed;
          call = fixed;
        }
        const card = this.fixCardMoves(call, planned, now);
        call = card.call;
        if (card.steps[0] !== planned[0]) return replan(call, now);
        if (card.steps.includes('finish') && !call.finishUser) {
          call = { ...call, finishUser: this.finishUserOf(call) };
        }
        if (card.steps[0] === 'addTask') {
          const fixed = this.fixTaskResponsible(call, now);
          if (fixed.missedTask?.failed) return replan(fixed, now);
          // Stored with the lookup as its next step: after a crash mid-request, the restart looks first.
          call = replan(countTaskAdd(fixed, now), now);
        }
        sending.set(call.callId, card.steps);
        return countSent(call, card.steps);
      },
      lease,
    );
    const sendable = updated.filter((call) => sending.has(call.callId));
    return { calls: new Map(sendable.map((call) => [call.callId, call])), steps: sending };
  }

  /**
   * The employee a register goes to, fixed before its first send (a retried register must carry the same
   * one): whoever answered when the call was answered before it was registered, else the call's employee.
   * The card key of that employee is kept; with SHOW=1 the card may be open for them from now on.
   */
  private fixRegisterUser(call: CallRecord, now: number): CallRecord {
    if (!call.portalUser) {
      const chooser = call.answeredBy ? { ...call, ...whoOfCardKey(call.answeredBy) } : call;
      const choice = choosePortalUser(chooser, this.settings.defaultUserId, (extension) =>
        this.routing?.employeeFor(extension),
      );
      if (!choice) {
        return markFailed(
          call,
          'no employee for this call: the PBX sent neither extension nor userId, and B24_DEFAULT_USER_ID is not set',
          now,
        );
      }
      const key = choice.routedToDefaultUser
        ? cardKeyOf(choice.user)
        : cardKey(chooser.extension, chooser.userId);
      call = {
        ...call,
        portalUser: choice.user,
        routedToDefaultUser: choice.routedToDefaultUser,
        cardRegisterKey: key,
      };
    } else if (call.routedToDefaultUser || call.cardRegisterKey === undefined) {
      call = { ...call, cardRegisterKey: cardKeyOf(call.portalUser) };
    }
    if (popsCard(call) && call.cardRegisterKey) {
      call = { ...call, cardMaybe: withKeys(call.cardMaybe, [call.cardRegisterKey]) };
    }
    return call;
  }

  /**
   * Fixes whom a planned show and hide name, as portal user ids. Card keys no portal user is known for
   * leave the card (noted on the call); a show or hide left with nobody is dropped from the request, and a
   * call whose own next step that was is re-planned instead of sent.
   */
  private fixCardMoves(
    call: CallRecord,
    planned: PortalStep[],
    now: number,
  ): { call: CallRecord; steps: PortalStep[] } {
    let steps = [...planned];
    const unknown: string[] = [];
    let waiting = false;
    const resolve = (keys: string[]) => {
      const target = { keys: [] as string[], userIds: [] as number[] };
      for (const key of keys) {
        const known = call.cardUsers?.[key] ?? this.routing?.employeeFor(key);
        const id = userIdOfCardKey(key, () => known);
        if (id === undefined) {
          // The directory is not loaded yet (undefined): the move waits for it; known not to exist: dropped.
          if (known === undefined && this.routing && !key.startsWith('user:')) waiting = true;
          else unknown.push(key);
          continue;
        }
        target.keys.push(key);
        if (!target.userIds.includes(id)) target.userIds.push(id);
      }
      return target;
    };
    let sendingCard: CallRecord['cardSending'] = {};
    if (steps.includes('show')) {
      const keys = call.portalCallId ? cardMoves(call).show : ringGroupRest(call, call.cardRegisterKey);
      const show = resolve(keys);
      if (show.userIds.length > 0) sendingCard = { ...sendingCard, show };
      else steps = steps.filter((step) => step !== 'show');
    }
    if (steps.includes('hide')) {
      const hide = resolve(cardMoves(call).hide);
      if (hide.userIds.length === 0 && call.cardToHide && call.cardRegisterKey === undefined) {
        const userId = this.cardUserOf(call);
        if (userId !== undefined) hide.userIds.push(userId);
      }
      if (hide.userIds.length > 0) sendingCard = { ...sendingCard, hide };
      else steps = steps.filter((step) => step !== 'hide');
    }
    const cardMaybe = withKeys(call.cardMaybe, sendingCard.show?.keys ?? []);
    let next: CallRecord = { ...call, cardSending: sendingCard, cardMaybe };
    if (unknown.length > 0) next = dropCardKeys(next, unknown, now);
    if (planned[0] === 'hide' && steps[0] !== 'hide' && next.cardToHide) {
      // A parked call's card whose employee has no known user id: nothing can close it.
      next = markCardHidden(
        next,
        now,
        `hide: the card of internal number ${call.portalUser?.USER_PHONE_INNER} stays open (no user id known for it)`,
      );
    } else if (waiting && steps[0] !== planned[0]) {
      next = markRetry(next, 'card: waiting for the employee directory', now + DIRECTORY_WAIT_MS, now);
    }
    return { call: next, steps };
  }

  /**
   * Whom a missed call's task goes to, fixed before its first add (every repeat and lookup must name the
   * same): the client's responsible employee, else the call's employee, else B24_DEFAULT_USER_ID.
   */
  private fixTaskResponsible(call: CallRecord, now: number): CallRecord {
    const task = call.missedTask!;
    if (task.responsibleId !== undefined) return call;
    // Forgotten when the batch settles (send's finally), not here: the mark may be applied twice.
    const client = this.taskClients.get(call.callId);
    const employee = call.finishUser ?? call.portalUser;
    const responsibleId =
      client?.responsibleUserId ??
      employee?.USER_ID ??
      (employee?.USER_PHONE_INNER === undefined ? undefined : this.cardUserOf(call)) ??
      this.settings.defaultUserId;
    if (responsibleId === undefined) {
      return taskGivenUp(
        call,
        'addTask: nobody to give the task to (no CRM client, no employee, B24_DEFAULT_USER_ID not set)',
      );
    }
    return {
      ...call,
      // A lead the register made for an unknown number is titled after the number: no name worth repeating.
      missedTask: {
        ...task,
        responsibleId,
        clientName: namesClient(client, call) ? client!.name : undefined,
      },
      updatedAt: now,
    };
  }

  /** The call with the portal user of each internal number among its card keys noted, as far as known. */
  private withCardUsers(call: CallRecord): CallRecord {
    const routing = this.routing;
    return routing ? withCardUsers(call, (extension) => routing.employeeFor(extension) ?? undefined) : call;
  }

  /** Whom finish names: whoever answered last when the portal knows them, else the register's employee. */
  private finishUserOf(call: CallRecord): PortalUser | undefined {
    const answerer = call.answeredBy;
    // A click-to-call's report that names nobody (the dialer's timeout): B24_DEFAULT_USER_ID.
    const fallback = call.clickToCall && this.settings.defaultUserId !== undefined;
    if (!answerer && !call.portalUser && fallback) return { USER_ID: this.settings.defaultUserId! };
    if (!answerer || (call.cardRegisterKey && samePerson(call, answerer, call.cardRegisterKey))) {
      return call.portalUser;
    }
    const who = whoOfCardKey(answerer);
    if (who.userId !== undefined) return { USER_ID: who.userId };
    const userId = this.routing?.employeeFor(who.extension!);
    if (typeof userId === 'number') return { USER_ID: userId };
    return userId === null ? call.portalUser : { USER_PHONE_INNER: who.extension };
  }

  /** The employee the register popped the card for: its USER_ID, or the one with its internal number. */
  private cardUserOf(call: CallRecord): number | undefined {
    const user = call.portalUser;
    if (user?.USER_ID !== undefined) return user.USER_ID;
    const extension = user?.USER_PHONE_INNER;
    return extension === undefined ? undefined : (this.routing?.employeeFor(extension) ?? undefined);
  }

  private outcomeSettings(): OutcomeSettings {
    return {
      now: Date.now(),
      defaultUserId: this.settings.defaultUserId,
      maxBackoffMs: this.settings.maxBackoffMs,
      maxAttempts: this.settings.maxAttempts,
    };
  }
}

/** Whether the CRM's name for the client says more than the number already does. */
function namesClient(client: TaskClient | null | undefined, call: CallRecord): boolean {
  return Boolean(client?.name) && !client!.name.includes(call.phoneNumber ?? '\u0000');
}
