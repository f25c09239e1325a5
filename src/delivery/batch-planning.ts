import { CallRecord, PortalStep } from '../calls/call';
import { BatchLimits, BatchPlan, planBatch, STEP_KINDS } from '../calls/step-planner';
import { OperatingReservation } from '../portal/operating-time';
import { CallStore } from '../store/call-store';
import { PortalTransport } from './portal-transport';

/** The method a portal that charges batches whole counts a request's server time to. */
const BATCH_METHOD = 'batch';

/** Calls looked at per request: twice a request's worth, so calls dropped while planning leave it full. */
const CANDIDATES_PER_COMMAND = 2;

/**
 * A method nearly at its operating limit goes in requests of at least this many of its commands (or fewer
 * when the request is smaller), not a command at a time as its old use leaves the window.
 */
const MIN_PACED_COMMANDS = 10;

/** The steps whose own method is one of `methods` (a call whose next step it is cannot go now). */
function stepsOf(methods: readonly string[]): PortalStep[] {
  return (Object.keys(STEP_KINDS) as PortalStep[]).filter((step) =>
    methods.includes(STEP_KINDS[step].method),
  );
}

export interface PlannedRequest {
  plan: BatchPlan;
  expiredHolds: string[];
  fetches: string[];
  /** Calls whose transcript the service is asked for next (`transcribe`). */
  transcribes: string[];
  due: CallRecord[];
  reservation?: OperatingReservation;
  pacedUntil?: number;
  /** Fewer calls read than asked for and every one planned: nothing else was due (unclaimed). */
  drained: boolean;
}

/**
 * Plans one request from the due calls not claimed by a batch in flight, one batch at a time: the store
 * answers asynchronously (PostgreSQL), and a batch planning from a read made before another claimed its
 * calls would send them twice at once. The plan's expected server time is set aside under the operating
 * limit before the next batch plans.
 */
export class BatchPlanning {
  private planning: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: CallStore,
    private readonly transport: PortalTransport,
    private readonly sizes: { maxBatchBytes?: number; maxPayloadBytes?: number },
  ) {}

  /** Calls a batch reads to plan one request: twice a request's worth. */
  candidates(): number {
    return this.transport.maxBatchSize * CANDIDATES_PER_COMMAND;
  }

  plan(now: number, claimed: Set<string>, looked?: CallRecord[]): Promise<PlannedRequest> {
    const next = this.planning.then(async () => {
      const limits = this.limits();
      const candidates = this.candidates();
      // The loop's look, read for as many as this read would ask (`claimed` is applied again). A stale copy
      // is safe: markSending writes only calls still at the planned step.
      const found = looked ?? (await this.store.dueCalls(this.transport.portalId, now, candidates, claimed));
      let due = found.filter((call) => !claimed.has(call.callId));
      let { plan, expiredHolds, fetches, transcribes } = planBatch(due, limits);
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
        ({ plan, expiredHolds, fetches, transcribes } = planBatch(due, limits));
        for (const method of plan.exhaustedMethods()) exhausted.add(method);
      }
      for (const callId of plan.callIds) claimed.add(callId);
      const operating = this.transport.operating;
      const batchCharged = operating?.counted(BATCH_METHOD) ?? false;
      const commands = plan.commandsByMethod();
      if (batchCharged) commands.set(BATCH_METHOD, plan.commandCount);
      const reservation = operating && plan.commandCount > 0 ? operating.reserve(commands) : undefined;
      let pacedUntil: number | undefined;
      if (operating && plan.commandCount === 0) {
        const minUseful = this.minPacedCommands();
        if (batchCharged && limits.maxCommands <= 0) exhausted.add(BATCH_METHOD);
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
        transcribes.length === 0 &&
        due.every((call) => claimed.has(call.callId));
      return { plan, expiredHolds, fetches, transcribes, due, reservation, pacedUntil, drained };
    });
    this.planning = next.catch(() => undefined);
    return next;
  }

  /**
   * A portal that charges a batch's whole server time to `batch` (its answers' own figures count it) limits
   * the request's commands by what `batch` may still use.
   */
  private limits(): BatchLimits {
    const operating = this.transport.operating;
    const minUseful = this.minPacedCommands();
    const batchRoom = operating?.counted(BATCH_METHOD)
      ? operating.allowance(BATCH_METHOD, minUseful)
      : Infinity;
    return {
      maxCommands: Math.min(this.transport.maxBatchSize, batchRoom),
      maxBytes: this.sizes.maxBatchBytes,
      maxPayloadBytes: this.sizes.maxPayloadBytes,
      allowance: operating && ((method) => operating.allowance(method, minUseful)),
    };
  }

  private minPacedCommands(): number {
    return Math.min(MIN_PACED_COMMANDS, this.transport.maxBatchSize);
  }
}
