import { Inject, Injectable } from '@nestjs/common';
import { CallEvent } from '../calls/call';
import { applyEvent, newCall } from '../calls/call-lifecycle';
import { WorkSignal } from '../common/work-signal';
import { PORTAL_ID } from '../config/portal-id';
import { RecordingHosts } from '../common/recording-hosts';
import { DeliverySettings, RecordingSettings } from '../config/settings';
import { CallStore, IngestResult } from '../store/call-store';

interface Submission {
  events: CallEvent[];
  resolve: (result: IngestResult) => void;
  reject: (error: unknown) => void;
}

/**
 * Stores PBX events durably before they are acknowledged. Requests arriving together share one synced
 * transaction (group commit): one fsync answers many PBXs, which is what lets intake keep up with bursts.
 * Delivery hears of the new work through the `WorkSignal` port, so intake does not depend on it.
 */
@Injectable()
export class CallIntake {
  private pending: Submission[] = [];
  private flushScheduled = false;
  private readonly recordingFetch?: { fetchable(url: string): boolean; waitMs: number };

  constructor(
    private readonly store: CallStore,
    private readonly delivery: DeliverySettings,
    private readonly work: WorkSignal,
    @Inject(PORTAL_ID) private readonly portalId: string,
    recording: RecordingSettings,
  ) {
    const hosts = new RecordingHosts(recording.fetchHosts);
    if (!hosts.empty)
      this.recordingFetch = { fetchable: (url) => hosts.allows(url), waitMs: recording.waitMs };
  }

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
    const portalId = this.portalId;
    const settings = {
      now: Date.now(),
      holdEndedWithoutStartMs: this.delivery.holdEndedWithoutStartMs,
      recordingFetch: this.recordingFetch,
    };
    try {
      const results = await this.store.ingest(
        portalId,
        submissions.map((submission) => submission.events),
        (call, event) => applyEvent(call ?? newCall(portalId, event.callId, settings.now), event, settings),
      );
      submissions.forEach((submission, index) => submission.resolve(results[index]));
      this.work.workAdded();
    } catch (error) {
      for (const submission of submissions) submission.reject(error);
    }
  }
}
