import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { DeliveryService } from '../delivery/delivery.service';
import { CallStore, IngestResult } from '../store/call-store';
import { CallEvent } from './call';
import { applyEvent, newCall } from './call-lifecycle';

interface Submission {
  events: CallEvent[];
  resolve: (result: IngestResult) => void;
  reject: (error: unknown) => void;
}

/**
 * Stores PBX events durably before they are acknowledged. Requests arriving together share one synced
 * transaction (group commit): one fsync answers many PBXs, which is what lets intake keep up with bursts.
 */
@Injectable()
export class CallIntake {
  private pending: Submission[] = [];
  private flushScheduled = false;

  constructor(
    private readonly store: CallStore,
    private readonly config: AppConfig,
    private readonly delivery: DeliveryService,
  ) {}

  submit(events: CallEvent[]): Promise<IngestResult> {
    return new Promise((resolve, reject) => {
      this.pending.push({ events, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    const submissions = this.pending;
    this.pending = [];
    this.flushScheduled = false;
    const portalId = this.delivery.portalId;
    const settings = {
      now: Date.now(),
      holdEndedWithoutStartMs: this.config.HOLD_ENDED_WITHOUT_START_SEC * 1000,
    };
    try {
      const results = await this.store.ingest(
        portalId,
        submissions.map((submission) => submission.events),
        (call, event) => applyEvent(call ?? newCall(portalId, event.callId, settings.now), event, settings),
      );
      submissions.forEach((submission, index) => submission.resolve(results[index]));
      this.delivery.notify();
    } catch (error) {
      for (const submission of submissions) submission.reject(error);
    }
  }
}
