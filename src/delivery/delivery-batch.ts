import { Logger } from '@nestjs/common';
import { CallRecord } from '../calls/call';
import { markHoldExpired } from '../calls/call-lifecycle';
import { BatchPlan, WireCommand } from '../calls/step-planner';
import { BudgetUnit } from '../portal/budget-unit';
import { PortalError } from '../portal/portal-error';
import { CallStore } from '../store/call-store';
import { DeliveryLease, LeaseLostError } from '../store/coordination-store';
import { BatchCard } from './batch-card';
import { BatchMarking, MarkedCalls } from './batch-marking';
import { BatchParty } from './batch-party';
import { BatchPlanning, PlannedRequest } from './batch-planning';
import { BatchReport, DeliveryObserver } from './batch-report';
import { BatchTask } from './batch-task';
import { CallRouting } from './call-routing';
import {
  applyAnswers,
  applyRequestFailure,
  CommandAnswer,
  namesUnknownEmployee,
  OutcomeSettings,
  refusedForContent,
} from './delivery-outcome';
import { PortalTransport } from './portal-transport';
import { RecordingDelivery } from './recording-delivery';
import { TranscriptDelivery } from './transcript-delivery';

export type { CallRouting, TaskClient } from './call-routing';
export type { DeliveryObserver } from './batch-report';

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

export interface BatchDependencies {
  store: CallStore;
  transport: PortalTransport;
  settings: BatchSettings;
  observer?: DeliveryObserver;
  routing?: CallRouting;
  /** Recordings the bridge downloads and uploads itself (docs/API.md); without it they are not fetched. */
  recordings?: RecordingDelivery;
  /** Transcripts of held recordings (SPEC §12); without it, none are made. */
  transcripts?: TranscriptDelivery;
}

export interface BatchRun {
  lease: DeliveryLease;
  unit: BudgetUnit;
  /** The calls of batches in flight: this batch skips them and claims its own until it settles. */
  claimed: Set<string>;
  onAnswer: (answer: PortalAnswer) => void;
  /** Told once the batch's calls are claimed (the loop takes the next unit only then). */
  onPlanned?: (planned: PlannedBatch) => void;
  /** The loop's own look (`CallStore.lookDue`), when it read a batch's `candidates()`: planned from. */
  looked?: CallRecord[];
}

/** One request's calls as marked, and what the batch knows to send them. */
interface Sending {
  run: BatchRun;
  plan: BatchPlan;
  sendable: BatchPlan;
  marked: MarkedCalls['calls'];
  commands: WireCommand[];
}

/**
 * One batch, from the due calls to the stored answers (what BullMQ's `process` or a Temporal activity is
 * to their worker's loop): plan with `planBatch`, let each part of the calls fix its fields and count the
 * commands as sent, send on the budget unit the loop took, apply each answer. The loop decides when; this
 * decides nothing about time.
 */
export class DeliveryBatches {
  private readonly logger: Logger;
  private readonly store: CallStore;
  private readonly transport: PortalTransport;
  private readonly settings: BatchSettings;
  private readonly recordings?: RecordingDelivery;
  private readonly transcripts?: TranscriptDelivery;
  private readonly planning: BatchPlanning;
  private readonly party: BatchParty;
  private readonly task: BatchTask;
  private readonly marking: BatchMarking;
  private readonly report: BatchReport;

  constructor(dependencies: BatchDependencies) {
    const { store, transport, settings, routing } = dependencies;
    this.store = store;
    this.transport = transport;
    this.settings = settings;
    this.recordings = dependencies.recordings;
    this.transcripts = dependencies.transcripts;
    this.logger = new Logger(`Delivery ${transport.portalId}`);
    this.planning = new BatchPlanning(store, transport, settings);
    this.party = new BatchParty(routing, settings.defaultUserId);
    this.task = new BatchTask(this.party, routing, settings.defaultUserId);
    const card = new BatchCard(this.party);
    this.marking = new BatchMarking(store, transport.portalId, { party: this.party, card, task: this.task });
    this.report = new BatchReport(this.logger, dependencies.observer);
  }

  candidates(): number {
    return this.planning.candidates();
  }

  /**
   * Plans, marks and sends one batch on `run.unit`; the unit is given back if nothing is sent. Says whether
   * it sent, found nothing, or found work that waits for the portal's operating time.
   */
  async send(run: BatchRun): Promise<BatchResult> {
    const { lease, unit, claimed } = run;
    const now = Date.now();
    let plan: BatchPlan | undefined;
    let planned: PlannedRequest | undefined;
    try {
      planned = await this.planning.plan(now, claimed, run.looked);
      run.onPlanned?.({ drained: planned.drained });
      plan = planned.plan;
      const parked =
        planned.expiredHolds.length > 0 && (await this.expireHeld(planned.expiredHolds, now, lease));
      const fetching =
        planned.fetches.length > 0 && this.recordings !== undefined
          ? await this.recordings.startFetches(planned.fetches, lease)
          : false;
      const transcribing =
        planned.transcribes.length > 0 && this.transcripts !== undefined
          ? await this.transcripts.start(planned.transcribes, lease)
          : false;
      if (plan.commandCount === 0) {
        if (parked || fetching || transcribing) return { kind: 'worked' };
        return planned.pacedUntil === undefined
          ? { kind: 'idle' }
          : { kind: 'paced', until: planned.pacedUntil };
      }
      const calls = new Set(plan.callIds);
      const inPlan = planned.due.filter((call) => calls.has(call.callId));
      const bindings = await this.party.findBindings(inPlan);
      await this.task.findClients(inPlan, bindings);
      const { calls: marked, steps } = await this.marking.markSending({
        plan,
        read: inPlan,
        bindings,
        lease,
        settings: this.outcomeSettings(),
      });
      const sendable = plan.only(steps);
      if (sendable.commandCount === 0) return { kind: 'worked', settled: false };
      const commands = sendable.commands(marked);
      const settled = await this.deliver({ run, plan, sendable, marked, commands });
      return { kind: 'worked', settled: settled && !parked && !fetching && !transcribing };
    } finally {
      if (planned?.reservation) this.transport.operating?.release(planned.reservation);
      for (const callId of plan?.callIds ?? []) {
        claimed.delete(callId);
        this.task.forget(callId);
      }
      unit.giveBack();
    }
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
          call.delivery.nextStep === 'wait-start' && (call.delivery.dueAt ?? 0) <= now
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

  /** Sends the marked calls' request and stores its answers; says whether nothing of it is left. */
  private async deliver(sending: Sending): Promise<boolean> {
    const { run, sendable, marked, commands } = sending;
    // Recordings' content is read only now, for this request's commands.
    const lost = (await this.recordings?.fillContent(sendable, commands, marked)) ?? new Map();
    const settings = this.outcomeSettings();
    const sentAt = Date.now();
    try {
      const outcome = await this.transport.batch(commands, {
        unit: run.unit,
        timeoutMs: this.recordings?.requestTimeoutMs(commands),
      });
      run.onAnswer({ ok: true, elapsedMs: Date.now() - sentAt });
      const answers = new Map<string, CommandAnswer>(
        commands.map(({ label }) => [
          label,
          lost.get(label) ?? { result: outcome.results[label], error: outcome.errors[label] },
        ]),
      );
      return await this.applyAnswered(sending, answers, settings);
    } catch (error) {
      if (!(error instanceof PortalError)) throw error;
      const refused = refusedForContent(error);
      const pause = !refused && ['credentials', 'rights', 'method-not-found'].includes(error.kind);
      run.onAnswer({ ok: false, error, pause, elapsedMs: Date.now() - sentAt });
      if (pause) return false;
      this.logger.warn(
        refused
          ? `batch of ${commands.length} commands refused, trying its calls in smaller batches: ${error.message}`
          : `batch of ${commands.length} commands failed, retrying later: ${error.message}`,
      );
      await this.applyFailed(sending, error, settings);
      return false;
    }
  }

  private async applyAnswered(
    sending: Sending,
    answers: Map<string, CommandAnswer>,
    settings: OutcomeSettings,
  ): Promise<boolean> {
    const { run, plan, sendable, marked } = sending;
    // The directory (its first read deferred) would have sent such a call to the default employee at once.
    const unknown = [...answers.values()].some((answer) => namesUnknownEmployee(answer.error));
    if (unknown) this.party.needEmployees();
    const entries = new Map(sendable.entries.map((entry) => [entry.callId, entry.commands]));
    await this.recordings?.postToUploadUrls(sendable, marked, answers, run.lease);
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
      run.lease,
    );
    this.report.answers(sendable, answers, updated);
    this.report.outcomes(marked, updated);
    this.transcripts?.noteOutcomes(marked, updated);
    await this.recordings?.forget(updated);
    // Every call planned was sent and written, and none has a step due: nothing of this request is left.
    return (
      sendable.commandCount === plan.commandCount &&
      updated.length === sendable.callIds.length &&
      updated.every((call) => call.delivery.dueAt === undefined)
    );
  }

  private async applyFailed(sending: Sending, error: PortalError, settings: OutcomeSettings): Promise<void> {
    const { run, sendable, marked } = sending;
    const entries = new Map(sendable.entries.map((entry) => [entry.callId, entry.commands]));
    this.report.requestFailed(sendable, error.kind);
    const commandCount = sendable.commandCount;
    const updated = await this.store.updateCallsFrom(
      this.transport.portalId,
      sendable.callIds.map((callId) => marked.get(callId)!),
      (call) =>
        applyRequestFailure(call, error, settings, { commandCount, commands: entries.get(call.callId)! }),
      run.lease,
    );
    this.report.outcomes(marked, updated);
    // An upload given up (it kept timing out) leaves the store too.
    await this.recordings?.forget(updated);
  }

  private outcomeSettings(): OutcomeSettings {
    return {
      now: Date.now(),
      defaultUserId: this.settings.defaultUserId,
      maxBackoffMs: this.settings.maxBackoffMs,
      maxAttempts: this.settings.maxAttempts,
      transcribe: this.transcripts !== undefined,
    };
  }
}
