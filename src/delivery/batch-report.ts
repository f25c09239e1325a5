import { Logger } from '@nestjs/common';
import { CallRecord, PortalStep } from '../calls/call';
import { BatchPlan } from '../calls/step-planner';
import { CommandAnswer } from './delivery-outcome';

/** Told what became of each command, for metrics; kept out of delivery's logic. */
export interface DeliveryObserver {
  onCommand(step: PortalStep, outcome: 'delivered' | 'failed' | 'retried'): void;
  onRetry(reason: string): void;
  /** A ringing call's register popped its card this long after the call was first stored. */
  onCardPopped?(elapsedMs: number): void;
  /** A call's register was answered with its CALL_ID (its line is on the portal's books now). */
  onRegistered?(call: CallRecord): void;
}

/** What a batch tells the log and the observer about the calls it moved on. */
export class BatchReport {
  constructor(
    private readonly logger: Logger,
    private readonly observer: DeliveryObserver | undefined,
  ) {}

  /**
   * One line per call this batch moved on: finished on the portal (info; registered: debug), or given up
   * (warn, with the portal's words). Ids, state and reason only: nothing here carries a credential.
   */
  outcomes(before: Map<string, CallRecord>, updated: CallRecord[]): void {
    for (const call of updated) {
      const was = before.get(call.callId);
      if (
        !was ||
        (was.delivery.state === call.delivery.state && was.delivery.failed === call.delivery.failed)
      ) {
        continue;
      }
      const ids = {
        callId: call.callId,
        portalCallId: call.portal.callId ?? null,
        state: call.delivery.state,
      };
      if (call.delivery.failed) {
        this.logger.warn(
          { ...ids, reason: call.delivery.lastError ?? null },
          `call ${call.callId} failed: ${call.delivery.lastError}`,
        );
      } else if (call.delivery.state === 'finished') {
        this.logger.log(
          ids,
          `call ${call.callId} delivered: finished on the portal as ${call.portal.callId}`,
        );
      } else if (call.delivery.state === 'registered') {
        this.logger.debug(ids, `call ${call.callId} registered on the portal as ${call.portal.callId}`);
      }
    }
  }

  answers(plan: BatchPlan, answers: Map<string, CommandAnswer>, updated: CallRecord[]): void {
    if (!this.observer) return;
    const failed = new Set(updated.filter((call) => call.delivery.failed).map((call) => call.callId));
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
      if (registered === 'register' && call.portal.callId) this.observer.onRegistered?.(call);
      if (
        registered === 'register' &&
        call.portal.callId &&
        call.card.shown?.includes(call.card.registerKey ?? '')
      ) {
        this.observer.onCardPopped?.(now - call.createdAt);
      }
    }
  }

  /** The whole request failed: every command of it is retried. */
  requestFailed(plan: BatchPlan, kind: string): void {
    for (const { step } of plan.entries.flatMap((entry) => entry.commands)) {
      this.observer?.onCommand(step, 'retried');
    }
    this.observer?.onRetry(kind);
  }
}
