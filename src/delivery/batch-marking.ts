import { CallRecord, PortalStep } from '../calls/call';
import { countSent, plan as replan } from '../calls/call-lifecycle';
import { countTranscriptSend } from '../calls/call-transcript';
import { BatchPlan, dueSteps } from '../calls/step-planner';
import { CallStore } from '../store/call-store';
import { DeliveryLease } from '../store/coordination-store';
import { BatchCard } from './batch-card';
import { Bindings, CallMark, MarkContext } from './batch-mark';
import { BatchParty } from './batch-party';
import { BatchTask } from './batch-task';
import { OutcomeSettings } from './delivery-outcome';

export interface MarkingRequest {
  plan: BatchPlan;
  /** The calls as the plan read them. */
  read: CallRecord[];
  bindings: Bindings;
  lease: DeliveryLease;
  settings: OutcomeSettings;
}

/** The calls marked as sending, and the steps of each that go in the request. */
export interface MarkedCalls {
  calls: Map<string, CallRecord>;
  steps: Map<string, PortalStep[]>;
}

type MarkStage = (mark: CallMark, context: MarkContext) => CallMark;

/**
 * Before sending: each part of a call fixes its own fields (the party: binding, employee, finish user;
 * the card: whom its moves name; the task: whom it goes to), then the commands are counted as sent, so a
 * finish repeated after a lost answer is recognised. The plan was made from a read that may predate
 * another batch's answer: a call whose stored next step is no longer the planned one, or not due yet, is
 * left alone and dropped from this batch.
 */
export class BatchMarking {
  private readonly stages: MarkStage[];

  constructor(
    private readonly store: CallStore,
    private readonly portalId: string,
    parts: { party: BatchParty; card: BatchCard; task: BatchTask },
  ) {
    const { party, card, task } = parts;
    this.stages = [
      (mark, context) => party.bind(mark, context),
      (mark, context) => card.withKnownUsers(mark, context),
      (mark, context) => party.fixRegister(mark, context),
      (mark, context) => card.fixMoves(mark, context),
      (mark) => party.fixFinish(mark),
      (mark, context) => task.fixResponsible(mark, context),
      // Stored with the look as its next step: after a crash mid-request, the restart looks first.
      (mark, context) =>
        mark.steps.includes('attachTranscription')
          ? { ...mark, call: replan(countTranscriptSend(mark.call), context.now) }
          : mark,
    ];
  }

  async markSending(request: MarkingRequest): Promise<MarkedCalls> {
    const { plan, read, bindings, settings } = request;
    const steps = new Map(plan.entries.map((entry) => [entry.callId, entry.commands.map((c) => c.step)]));
    const now = Date.now();
    const sending = new Map<string, PortalStep[]>();
    const byId = new Map(read.map((call) => [call.callId, call]));
    // From the calls as planned (one statement unless intake wrote some since; those are read again, so
    // this may run twice for a call: only what it did to the copy written counts).
    const updated = await this.store.updateCallsFrom(
      this.portalId,
      plan.callIds.flatMap((callId) => byId.get(callId) ?? []),
      (call) => {
        sending.delete(call.callId);
        const planned = steps.get(call.callId) ?? [];
        if (dueSteps(call)[0] !== planned[0] || (call.delivery.dueAt ?? Infinity) > now) return call;
        const mark = this.mark(call, { planned, now, bindings, settings });
        if (mark.stop) return mark.call;
        sending.set(call.callId, mark.steps);
        return countSent(mark.call, mark.steps);
      },
      request.lease,
    );
    const sendable = updated.filter((call) => sending.has(call.callId));
    return { calls: new Map(sendable.map((call) => [call.callId, call])), steps: sending };
  }

  private mark(call: CallRecord, context: MarkContext): CallMark {
    let mark: CallMark = { call, steps: [...context.planned] };
    for (const stage of this.stages) {
      mark = stage(mark, context);
      if (mark.stop) return mark;
    }
    return mark;
  }
}
