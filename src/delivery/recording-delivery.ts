import { Logger } from '@nestjs/common';
import { CallRecord } from '../calls/call';
import {
  markRecordFailed,
  markRecordingFetching,
  markRecordingNotReady,
  markRecordingStored,
} from '../calls/call-lifecycle';
import { BatchPlan, PlannedCommand, WireCommand } from '../calls/step-planner';
import { storedRecordingOf } from '../common/audio-type';
import { PortalError } from '../portal/portal-error';
import { CallStore } from '../store/call-store';
import { DeliveryLease, LeaseLostError } from '../store/coordination-store';
import { CommandAnswer } from './delivery-outcome';
import { RecordingFetcher } from './recording-fetcher';

export interface RecordingOptions {
  fetcher: RecordingFetcher;
  /** RECORDING_REQUEST_MAX_MB in bytes: content over it goes through the portal's uploadUrl. */
  requestMaxBytes: number;
  maxBackoffMs: number;
  /** A download not settled within this is tried again (after a crash mid-download, say). */
  fetchLeaseMs: number;
  /** Downloads at once: each holds one file in memory. */
  maxConcurrentFetches: number;
  /** Per request to an uploadUrl. */
  uploadTimeoutMs: number;
}

/**
 * The bridge's own part of recordings (SPEC.md §5) beside a batch: downloads due recordings into the store
 * (`fetchRecord`), fills FILE_CONTENT of the planned `uploadRecord` commands right before sending (only the
 * files of that request are in memory), posts files too big for a request to the portal's `uploadUrl`, and
 * forgets the content once the portal has it.
 */
export class RecordingDelivery {
  private readonly fetching = new Set<string>();
  private readonly logger: Logger;

  constructor(
    private readonly store: CallStore,
    private readonly portalId: string,
    private readonly options: RecordingOptions,
    private readonly wake: () => void,
  ) {
    this.logger = new Logger(`Recordings ${portalId}`);
  }

  /** Starts downloads of due recordings while there is room; says whether any started. */
  async startFetches(callIds: string[], lease: DeliveryLease): Promise<boolean> {
    const room = this.options.maxConcurrentFetches - this.fetching.size;
    const chosen = callIds.filter((id) => !this.fetching.has(id)).slice(0, Math.max(0, room));
    if (chosen.length === 0) return false;
    for (const id of chosen) this.fetching.add(id);
    const now = Date.now();
    let marked: CallRecord[];
    try {
      marked = await this.store.updateCalls(
        this.portalId,
        chosen,
        (call) =>
          call.nextStep === 'fetchRecord' && (call.dueAt ?? Infinity) <= now
            ? markRecordingFetching(call, now + this.options.fetchLeaseMs, now)
            : call,
        lease,
      );
    } catch (error) {
      for (const id of chosen) this.fetching.delete(id);
      throw error;
    }
    const started = marked.filter((call) => call.nextStep === 'fetchRecord' && call.ended?.recordingUrl);
    for (const id of chosen) if (!started.some((call) => call.callId === id)) this.fetching.delete(id);
    for (const call of started) void this.fetchOne(call, lease);
    return started.length > 0;
  }

  private async fetchOne(call: CallRecord, lease: DeliveryLease): Promise<void> {
    try {
      const outcome = await this.options.fetcher.fetch(call.ended!.recordingUrl!);
      const now = Date.now();
      const stillDue = (current: CallRecord) => current.nextStep === 'fetchRecord';
      if (outcome.kind === 'fetched') {
        const stored = storedRecordingOf(
          outcome.content,
          outcome.audio,
          outcome.name,
          this.options.requestMaxBytes,
        );
        await this.store.putRecording(
          this.portalId,
          call.callId,
          outcome.content,
          (current) => (stillDue(current) ? markRecordingStored(current, 'fetch', stored, now) : current),
          lease,
        );
      } else {
        await this.store.updateCalls(
          this.portalId,
          [call.callId],
          (current) =>
            !stillDue(current)
              ? current
              : outcome.kind === 'not-ready'
                ? markRecordingNotReady(current, outcome.reason, now, this.options.maxBackoffMs)
                : markRecordFailed(current, outcome.reason, now),
          lease,
        );
      }
    } catch (error) {
      if (!(error instanceof LeaseLostError)) {
        this.logger.error(`recording of call ${call.callId}: ${(error as Error).message}`);
      }
    } finally {
      this.fetching.delete(call.callId);
      this.wake();
    }
  }

  /**
   * Puts the stored content into the planned uploads' FILE_CONTENT (read now, not when planned). Returns
   * the labels whose content the store no longer holds, with the answer they get instead of the portal's.
   */
  async fillContent(
    plan: BatchPlan,
    commands: WireCommand[],
    calls: ReadonlyMap<string, CallRecord>,
  ): Promise<Map<string, CommandAnswer>> {
    const lost = new Map<string, CommandAnswer>();
    const byLabel = new Map(commands.map((command) => [command.label, command]));
    for (const entry of plan.entries) {
      const call = calls.get(entry.callId);
      for (const { label, step } of entry.commands) {
        if (step !== 'uploadRecord' || call?.recording?.upload !== 'content') continue;
        const content = await this.store.getRecording(this.portalId, entry.callId);
        if (!content) lost.set(label, { error: missing() });
        else byLabel.get(label)!.params.FILE_CONTENT = content.toString('base64');
      }
    }
    return lost;
  }

  /**
   * Uploads answered with an `uploadUrl` (files too big for a request): the file goes there as multipart
   * field `file`, one at a time; the answer to that POST becomes the command's answer.
   */
  async postToUploadUrls(
    plan: BatchPlan,
    calls: ReadonlyMap<string, CallRecord>,
    answers: Map<string, CommandAnswer>,
  ): Promise<void> {
    for (const entry of plan.entries) {
      const call = calls.get(entry.callId);
      for (const { label, step } of entry.commands) {
        if (step !== 'uploadRecord' || call?.recording?.upload !== 'url') continue;
        const answer = answers.get(label);
        if (!answer || answer.error) continue;
        answers.set(label, await this.postFile(call, answer.result));
      }
    }
  }

  private async postFile(call: CallRecord, result: unknown): Promise<CommandAnswer> {
    const uploadUrl = (result as { uploadUrl?: unknown } | undefined)?.uploadUrl;
    if (typeof uploadUrl !== 'string' || !/^https?:\/\//.test(uploadUrl)) {
      return { error: new PortalError('invalid', '', 'attachRecord answered without an uploadUrl') };
    }
    const content = await this.store.getRecording(this.portalId, call.callId);
    if (!content) return { error: missing() };
    const form = new FormData();
    form.append(
      'file',
      new Blob([content as unknown as BlobPart]),
      call.recording!.filename ?? 'recording.mp3',
    );
    try {
      const response = await fetch(uploadUrl, {
        method: 'POST',
        body: form,
        redirect: 'error',
        signal: AbortSignal.timeout(this.options.uploadTimeoutMs),
      });
      const text = await response.text();
      let body: { result?: unknown; error?: string; error_description?: string } = {};
      try {
        body = JSON.parse(text) as typeof body;
      } catch {
        // not JSON: judged by the status alone
      }
      if (response.ok && !body.error) return { result: body.result ?? body };
      const description = `uploadUrl answered HTTP ${response.status}${body.error ? ` ${body.error}` : ''}`;
      const kind = response.status >= 500 || response.status === 429 ? 'server' : 'invalid';
      return { error: new PortalError(kind, body.error ?? '', description, response.status) };
    } catch (error) {
      return { error: new PortalError('network', '', `uploadUrl: ${(error as Error).message}`) };
    }
  }

  /** The portal has the recording (or it was given up): its content leaves the store, unless pushed anew since. */
  async forget(updated: CallRecord[]): Promise<void> {
    for (const call of updated) {
      const recording = call.recording;
      if (recording?.bytes !== undefined && (call.recordAttached || call.recordFailed)) {
        await this.store.deleteRecording(this.portalId, call.callId, recording.storedAt);
      }
    }
  }

  /**
   * The call's commands whose answers still apply: an upload answered after the PBX pushed a newer file is
   * dropped (the newer one goes next).
   */
  static current(
    call: CallRecord,
    sent: CallRecord | undefined,
    commands: PlannedCommand[],
  ): PlannedCommand[] {
    const stale = call.recording?.storedAt !== sent?.recording?.storedAt;
    return stale ? commands.filter((command) => command.step !== 'uploadRecord') : commands;
  }
}

function missing(): PortalError {
  return new PortalError('invalid', '', 'recording: its content is no longer in the store');
}
