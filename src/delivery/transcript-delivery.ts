import { Logger } from '@nestjs/common';
import { CallRecord } from '../calls/call';
import { plan as replan } from '../calls/call-lifecycle';
import {
  transcribed,
  transcribing,
  transcriptFailed,
  transcriptNeedsFile,
  transcriptRetry,
} from '../calls/call-transcript';
import { CallStore } from '../store/call-store';
import { DeliveryLease, LeaseLostError } from '../store/coordination-store';
import { RecordingTranscript, Transcriber } from '../transcripts/transcriber';

/** What a portal's transcripts are told to (metrics). */
export interface TranscriptObserver {
  /** A transcript reached an end: attached, none (no speech), failed. */
  onOutcome?(outcome: 'attached' | 'none' | 'failed'): void;
  onServiceMs?(ms: number): void;
}

/**
 * A call at the service is claimed this long, renewed every third of it while the service works: a
 * crash mid-request (the claim no longer renewed) asks again within a minute, however long a file takes.
 */
const TRANSCRIBE_CLAIM_MS = 60_000;

/**
 * One portal's part of transcripts (SPEC §12) beside its batches: asks the deployment's transcriber for
 * the due calls' messages (`transcribe`) while it has a free slot, stores them (durable, before the portal
 * is called), and lets the held recording go once its messages are stored. The attach itself is a batch
 * command like every other step (`attachTranscription`).
 */
export class TranscriptDelivery {
  private readonly logger: Logger;
  private readonly working = new Set<string>();
  private readonly stopHearing: () => void;
  private readonly abort = new AbortController();

  constructor(
    private readonly store: CallStore,
    private readonly portalId: string,
    private readonly transcriber: Transcriber,
    private readonly wake: () => void,
    private readonly observer: TranscriptObserver = {},
  ) {
    this.logger = new Logger(`Transcripts ${portalId}`);
    this.stopHearing = transcriber.onFree(() => this.wake());
  }

  /** Starts the due calls' transcripts while the transcriber has slots; says whether any started. */
  async start(callIds: string[], lease: DeliveryLease): Promise<boolean> {
    const chosen: string[] = [];
    for (const id of callIds) {
      if (this.working.has(id)) continue;
      if (!this.transcriber.tryTake()) break;
      chosen.push(id);
      this.working.add(id);
    }
    if (chosen.length === 0) return false;
    const now = Date.now();
    let marked: CallRecord[] = [];
    try {
      marked = await this.store.updateCalls(
        this.portalId,
        chosen,
        (call) =>
          call.delivery.nextStep === 'transcribe' && (call.delivery.dueAt ?? Infinity) <= now
            ? replan(transcribing(call, now + TRANSCRIBE_CLAIM_MS, now), now)
            : call,
        lease,
      );
    } finally {
      const started = new Set(
        marked.filter((call) => call.delivery.retryAt === now + TRANSCRIBE_CLAIM_MS).map((c) => c.callId),
      );
      for (const id of chosen) {
        if (started.has(id)) continue;
        this.working.delete(id);
        this.transcriber.giveBack();
      }
    }
    const started = marked.filter((call) => this.working.has(call.callId));
    for (const call of started) void this.transcribeOne(call, lease);
    return started.length > 0;
  }

  /** Delivery stops: requests at the service are abandoned (the claim runs out, whoever delivers asks again). */
  stop(): void {
    this.abort.abort(new Error('delivery stopped'));
    this.stopHearing();
  }

  /** Transcript outcomes an answered batch wrote (attached, or given up by the portal). */
  noteOutcomes(before: ReadonlyMap<string, CallRecord>, after: CallRecord[]): void {
    for (const call of after) {
      const was = before.get(call.callId)?.transcript?.state;
      const now = call.transcript?.state;
      if (now && now !== was && now !== 'pending') this.observer.onOutcome?.(now);
    }
  }

  private async transcribeOne(call: CallRecord, lease: DeliveryLease): Promise<void> {
    const renewal = setInterval(() => void this.renewClaim(call.callId, lease), TRANSCRIBE_CLAIM_MS / 3);
    try {
      const content = await this.store.getRecording(this.portalId, call.callId);
      const outcome: RecordingTranscript | { kind: 'lost' } = content
        ? await this.transcriber.transcribe(
            {
              audio: content,
              filename: call.recording.file?.filename ?? 'recording.mp3',
              direction: call.party.direction,
            },
            this.abort.signal,
          )
        : { kind: 'lost' };
      if ('serviceMs' in outcome) this.observer.onServiceMs?.(outcome.serviceMs);
      const now = Date.now();
      const [written] = await this.store.updateCalls(
        this.portalId,
        [call.callId],
        (current) => {
          if (current.delivery.nextStep !== 'transcribe') return current;
          if (outcome.kind === 'lost') {
            return replan(transcriptFailed(current, 'transcript: the recording is no longer held'), now);
          }
          if (outcome.kind === 'messages') return replan(transcribed(current, outcome.messages), now);
          if (outcome.kind === 'refused') {
            return replan(transcriptFailed(current, `transcript: ${outcome.reason}`), now);
          }
          const waited = transcriptRetry(
            current,
            outcome.reason,
            now,
            this.transcriber.waitMs,
            outcome.retryAfterMs,
          );
          return replan(waited, now);
        },
        lease,
      );
      if (written && written.transcript?.state !== 'pending') {
        this.observer.onOutcome?.(written.transcript!.state as 'none' | 'failed');
      }
      // The messages are stored (or the transcript is over): the held file goes.
      if (written && !transcriptNeedsFile(written) && written.recording.file?.bytes !== undefined) {
        if (written.recording.attached || written.recording.failed) {
          await this.store.deleteRecording(this.portalId, written.callId, written.recording.file.storedAt);
        }
      }
    } catch (error) {
      if (!this.abort.signal.aborted && !(error instanceof LeaseLostError)) {
        this.logger.error(`transcript of call ${call.callId}: ${(error as Error).message}`);
      }
    } finally {
      clearInterval(renewal);
      this.working.delete(call.callId);
      this.transcriber.giveBack();
      this.wake();
    }
  }

  /** The call is still at the service: its claim runs on (a lost lease or a settled call: nothing). */
  private async renewClaim(callId: string, lease: DeliveryLease): Promise<void> {
    const now = Date.now();
    await this.store
      .updateCalls(
        this.portalId,
        [callId],
        (current) =>
          current.delivery.nextStep === 'transcribe'
            ? replan(transcribing(current, now + TRANSCRIBE_CLAIM_MS, now), now)
            : current,
        lease,
      )
      .catch(() => undefined);
  }
}
