import { Injectable, Optional } from '@nestjs/common';
import { CallEvent } from '../calls/call';
import { applyEvent, newCall, plan } from '../calls/call-lifecycle';
import { ClickMatchSettings, linkPortalCall } from '../calls/click-match';
import { answeredAtOf, markCalledBack } from '../calls/missed-call-task';
import { PortalCrm } from '../crm/portal-crm';
import { WorkSignal } from '../common/work-signal';
import { isWithheld } from '../common/phone-number';
import { LineBook } from '../common/lines';
import { RecordingHosts } from '../common/recording-hosts';
import { DeliverySettings, RecordingSettings } from '../config/settings';
import { AnsweredCall, CallStore, IngestResult } from '../store/call-store';

/** Whether some line's rule turns missed-call tasks on (then callbacks are noted whatever the portal's own). */
function tasksByLine(lines: LineBook | undefined): boolean {
  return lines?.rules.some((rule) => rule.missedCallTask === true) ?? false;
}

interface Submission {
  portalId: string;
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
  private readonly clickMatchMs: number;

  constructor(
    private readonly store: CallStore,
    private readonly delivery: DeliverySettings,
    private readonly work: WorkSignal,
    recording: RecordingSettings,
    @Optional() private readonly crm?: PortalCrm,
  ) {
    this.clickMatchMs = delivery.dialMatchMs ?? 60_000;
    const hosts = new RecordingHosts(recording.fetchHosts);
    if (!hosts.empty) {
      this.recordingFetch = { fetchable: (url) => hosts.allows(url), waitMs: recording.waitMs };
    }
  }

  /** Stores `events` of the portal `portalId` (the PBX's own): resolves once they are on disk. */
  submit(portalId: string, events: CallEvent[]): Promise<IngestResult> {
    return new Promise((resolve, reject) => {
      this.pending.push({ portalId, events, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  /**
   * MISSED_CALL_TASK: calls answered now complete the tasks of earlier missed calls from their numbers
   * whose deadline has not passed, in one store transaction per flush. Done before the 202 and for
   * duplicates too (it changes nothing the second time), so a crash between the events' commit and this
   * write is made good by the PBX's retry. `phones`: each applied event's call's number, as just stored.
   */
  private async noteCallbacks(
    portalId: string,
    events: CallEvent[],
    phones: ReadonlyMap<string, string | undefined>,
  ): Promise<void> {
    const answered: AnsweredCall[] = [];
    for (const event of events) {
      const answeredAt = answeredAtOf(event);
      if (answeredAt === undefined) continue;
      const phone =
        event.phoneNumber ??
        (phones.has(event.callId)
          ? phones.get(event.callId)
          : (await this.store.findCall(portalId, event.callId))?.party.phoneNumber);
      // A withheld number calls nobody back (its missed calls await no callback).
      if (phone && !isWithheld(phone)) answered.push({ callId: event.callId, phone, answeredAt });
    }
    if (answered.length === 0) return;
    // The earliest answer from a number is the one that calls its missed calls back.
    answered.sort((a, b) => a.answeredAt - b.answeredAt);
    await this.store.updateCallsAwaitingCallback(portalId, answered, (call) => {
      let marked = call;
      for (const answer of answered) {
        if (answer.phone === call.party.phoneNumber) {
          marked = markCalledBack(marked, answer.callId, answer.answeredAt);
        }
      }
      return marked === call ? call : plan({ ...marked, updatedAt: Date.now() }, Date.now());
    });
  }

  /**
   * One transaction per portal among the submissions waiting together (usually one portal: a deployment
   * with one, or a burst from one PBX); the portals' commits run side by side.
   */
  private async flush(): Promise<void> {
    const submissions = this.pending;
    this.pending = [];
    this.flushScheduled = false;
    const byPortal = new Map<string, Submission[]>();
    for (const submission of submissions) {
      const group = byPortal.get(submission.portalId);
      if (group) group.push(submission);
      else byPortal.set(submission.portalId, [submission]);
    }
    await Promise.all([...byPortal].map(([portalId, group]) => this.flushPortal(portalId, group)));
  }

  private async flushPortal(portalId: string, submissions: Submission[]): Promise<void> {
    const directory = this.crm?.directoryOf(portalId);
    // The portal's own DIAL_MATCH_SEC and recording hosts, never another tenant's.
    const own = this.crm?.intakeOf(portalId);
    const clickMatch: ClickMatchSettings = {
      windowMs: own ? own.dialMatchMs : this.clickMatchMs,
      userOf: (extension) => directory?.userIdFor(extension),
    };
    const missedCallTask = this.crm?.missedCallTaskOf(portalId);
    const settings = {
      now: Date.now(),
      holdEndedWithoutStartMs: this.delivery.holdEndedWithoutStartMs,
      recordingFetch: own ? own.recordingFetch : this.recordingFetch,
      missedCallTaskDeadlineMs:
        missedCallTask === false
          ? undefined
          : (this.delivery.missedCallTaskDeadlineMs ??
            (missedCallTask ? this.delivery.missedCallTaskWindowMs : undefined)),
      missedCallTaskWindowMs: this.delivery.missedCallTaskWindowMs,
      // The portal's own lines (docs/API.md "Lines"), never another tenant's.
      lines: own ? own.lines : this.delivery.lines,
    };
    const phones = new Map<string, string | undefined>();
    try {
      const results = await this.store.ingest(
        portalId,
        submissions.map((submission) => submission.events),
        (call, event, clicks) => {
          const applied = applyEvent(call ?? newCall(portalId, event.callId, settings.now), event, settings);
          // Click-to-call: the portal's own CALL_ID, from the event's crmCallId or a stored click.
          const linked = linkPortalCall(applied, event, clicks, clickMatch);
          const next = linked === applied ? applied : plan(linked, settings.now);
          phones.set(event.callId, next.party.phoneNumber);
          return next;
        },
      );
      if (settings.missedCallTaskDeadlineMs !== undefined || tasksByLine(settings.lines)) {
        await this.noteCallbacks(
          portalId,
          submissions.flatMap((submission) => submission.events),
          phones,
        );
      }
      submissions.forEach((submission, index) => submission.resolve(results[index]));
      this.work.workAdded(portalId);
    } catch (error) {
      for (const submission of submissions) submission.reject(error);
    }
  }
}
