import { Logger } from '@nestjs/common';
import { CallRecord } from '../calls/call';
import {
  markRecordFailed,
  markRecordingFetching,
  markRecordingNotReady,
  markRecordingStored,
} from '../calls/call-lifecycle';
import { transcriptNeedsFile } from '../calls/call-transcript';
import { BatchPlan, PlannedCommand, WireCommand } from '../calls/step-planner';
import { randomUUID } from 'node:crypto';
import { IncomingMessage, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { recordingFileName } from '../common/audio-type';
import { RecordingScan, scannedRecording } from '../common/recording-stream';
import { PortalError } from '../portal/portal-error';
import { CallStore, RecordingContent, RecordingQuotaError, StagedRecording } from '../store/call-store';
import { DeliveryLease, LeaseLostError } from '../store/coordination-store';
import { CommandAnswer } from './delivery-outcome';
import { FetchOutcome, outcomeOfBody, RecordingFetcher } from './recording-fetcher';

export interface RecordingOptions {
  fetcher: RecordingFetcher;
  /** RECORDING_REQUEST_MAX_MB in bytes: content over it goes through the portal's uploadUrl. */
  requestMaxBytes: number;
  maxBackoffMs: number;
  /** A download not settled within this is tried again (after a crash mid-download, say). */
  fetchLeaseMs: number;
  /** Downloads at once (each streams into the store: one chunk in memory). */
  maxConcurrentFetches: number;
  /** An upload to an uploadUrl that sends or hears nothing for this long is abandoned (a progress timeout). */
  uploadTimeoutMs: number;
  /** The portal's per-request timeout (B24_TIMEOUT_MS): a request carrying content gets it plus its bytes' time. */
  requestTimeoutMs: number;
  /** RECORDING_QUOTA_MB in bytes: a download that would pass it is given up; undefined: no limit. */
  quotaBytes?: number;
}

/** The slowest link a file upload is given time for: 1 Mbit/s (a 30 MB request then has 4 minutes). */
export const UPLOAD_FLOOR_BYTES_PER_SEC = 125_000;

/** The most of an uploadUrl's answer that is read: it is a small JSON envelope. */
const MAX_UPLOAD_ANSWER_BYTES = 64 * 1024;

/**
 * The bridge's own part of recordings (docs/API.md) beside a batch: downloads due recordings into the store
 * (`fetchRecord`), fills FILE_CONTENT of the planned `uploadRecord` commands right before sending (only the
 * files of that request are in memory), posts files too big for a request to the portal's `uploadUrl`, and
 * forgets the content once the portal has it.
 */
export class RecordingDelivery {
  private readonly fetching = new Set<string>();
  private readonly logger: Logger;
  /** One per lease epoch: aborted when that lease is no longer the current one, or delivery stops. */
  private readonly transfers = new Map<number, AbortController>();

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
          call.delivery.nextStep === 'fetchRecord' && (call.delivery.dueAt ?? Infinity) <= now
            ? markRecordingFetching(call, now + this.options.fetchLeaseMs, now)
            : call,
        lease,
      );
    } catch (error) {
      for (const id of chosen) this.fetching.delete(id);
      throw error;
    }
    const started = marked.filter(
      (call) => call.delivery.nextStep === 'fetchRecord' && call.party.ended?.recordingUrl,
    );
    for (const id of chosen) if (!started.some((call) => call.callId === id)) this.fetching.delete(id);
    for (const call of started) void this.fetchOne(call, lease);
    return started.length > 0;
  }

  /**
   * The signal of transfers started under `lease`. Downloads and uploads are tied to the lease they started
   * under: when it is no longer this replica's (lost, handed over) or delivery stops, they are aborted.
   */
  signalFor(lease: DeliveryLease): AbortSignal {
    let controller = this.transfers.get(lease.epoch);
    if (!controller) {
      controller = new AbortController();
      this.transfers.set(lease.epoch, controller);
    }
    return controller.signal;
  }

  /** The lease now held (undefined: none): transfers started under any other are aborted. */
  keepOnly(current: DeliveryLease | undefined): void {
    for (const [epoch, controller] of this.transfers) {
      if (epoch === current?.epoch) continue;
      controller.abort(new Error("the delivery lease is no longer this replica's"));
      this.transfers.delete(epoch);
    }
  }

  /** Delivery stops: every download and upload in flight is aborted. */
  stop(): void {
    this.keepOnly(undefined);
  }

  private async fetchOne(call: CallRecord, lease: DeliveryLease): Promise<void> {
    const signal = this.signalFor(lease);
    try {
      const outcome = await this.download(call, lease, signal);
      if (outcome) {
        const now = Date.now();
        const stillDue = (current: CallRecord) => current.delivery.nextStep === 'fetchRecord';
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
      if (signal.aborted) {
        this.logger.log(`download of call ${call.callId}'s recording stopped: ${String(signal.reason)}`);
        await this.resumeLater(call, lease);
      } else if (!(error instanceof LeaseLostError)) {
        this.logger.error(`recording of call ${call.callId}: ${(error as Error).message}`);
      }
    } finally {
      this.fetching.delete(call.callId);
      this.wake();
    }
  }

  /**
   * A download stopped with the delivery: while the lease is still this replica's (a shutdown), the call is
   * due again soon instead of after the download's claim (whoever delivers next takes it up).
   */
  private async resumeLater(call: CallRecord, lease: DeliveryLease): Promise<void> {
    const now = Date.now();
    await this.store
      .updateCalls(
        this.portalId,
        [call.callId],
        (current) =>
          current.delivery.nextStep === 'fetchRecord'
            ? markRecordingNotReady(current, 'download stopped with the delivery', now, 1000)
            : current,
        lease,
      )
      .catch(() => undefined);
  }

  /**
   * Streams the file into the store and makes it the call's (undefined: done), or says what the download
   * came to instead.
   */
  private async download(
    call: CallRecord,
    lease: DeliveryLease,
    signal: AbortSignal,
  ): Promise<Exclude<FetchOutcome, { kind: 'fetched' }> | undefined> {
    const opened = await this.options.fetcher.open(call.party.ended!.recordingUrl!, signal);
    if (opened.kind !== 'open') return opened;
    const scan = new RecordingScan(this.options.fetcher.maxBytes, opened.contentType, opened.tooLarge);
    let staged: StagedRecording;
    try {
      staged = await this.store.stageRecording(this.portalId, scan.pass(opened.body));
    } catch (error) {
      if (signal.aborted) throw error;
      return outcomeOfBody(error as Error, opened) as Exclude<FetchOutcome, { kind: 'fetched' }>;
    }
    const stored = scannedRecording(
      scan,
      recordingFileName(opened.name, scan.kind!),
      this.options.requestMaxBytes,
    );
    const now = Date.now();
    try {
      await this.store.putRecording({
        portalId: this.portalId,
        callId: call.callId,
        staged,
        mutate: (current) =>
          current.delivery.nextStep === 'fetchRecord'
            ? markRecordingStored(current, 'fetch', stored, now)
            : current,
        fence: lease,
        quotaBytes: this.options.quotaBytes,
      });
    } catch (error) {
      await this.store.discardStagedRecording(this.portalId, staged);
      if (error instanceof RecordingQuotaError) {
        return { kind: 'failed', reason: `recording: ${error.message}` };
      }
      throw error;
    }
    return undefined;
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
        if (step !== 'uploadRecord' || call?.recording.file?.upload !== 'content') continue;
        const content = await this.store.getRecording(this.portalId, entry.callId);
        if (!content) lost.set(label, { error: missing() });
        else byLabel.get(label)!.params.FILE_CONTENT = content.toString('base64');
      }
    }
    return lost;
  }

  /**
   * The timeout of a request carrying file content: the portal's per-request timeout plus the time its bytes
   * take at UPLOAD_FLOOR_BYTES_PER_SEC, so a slow link is not cut off on the wall clock (undefined: no
   * content, the client's own timeout).
   */
  requestTimeoutMs(commands: WireCommand[]): number | undefined {
    let bytes = 0;
    for (const command of commands) {
      const content = command.params.FILE_CONTENT;
      if (typeof content === 'string') bytes += content.length;
    }
    if (bytes === 0) return undefined;
    return this.options.requestTimeoutMs + Math.ceil((bytes / UPLOAD_FLOOR_BYTES_PER_SEC) * 1000);
  }

  /**
   * Uploads answered with an `uploadUrl` (files too big for a request): the file goes there as multipart
   * field `file`, one at a time; the answer to that POST becomes the command's answer.
   */
  async postToUploadUrls(
    plan: BatchPlan,
    calls: ReadonlyMap<string, CallRecord>,
    answers: Map<string, CommandAnswer>,
    lease: DeliveryLease,
  ): Promise<void> {
    for (const entry of plan.entries) {
      const call = calls.get(entry.callId);
      for (const { label, step } of entry.commands) {
        if (step !== 'uploadRecord' || call?.recording.file?.upload !== 'url') continue;
        const answer = answers.get(label);
        if (!answer || answer.error) continue;
        answers.set(label, await this.postFile(call, answer.result, this.signalFor(lease)));
      }
    }
  }

  /**
   * The stored file goes to the uploadUrl as multipart field `file`, streamed from the store a chunk at a
   * time. A progress timeout, not a wall clock: the upload is abandoned only when nothing moves for
   * `uploadTimeoutMs`, so a slow link finishes and a stalled one is given up (and counted).
   */
  private async postFile(call: CallRecord, result: unknown, signal: AbortSignal): Promise<CommandAnswer> {
    const uploadUrl = (result as { uploadUrl?: unknown } | undefined)?.uploadUrl;
    if (typeof uploadUrl !== 'string' || !/^https?:\/\//.test(uploadUrl)) {
      return { error: new PortalError('invalid', '', 'attachRecord answered without an uploadUrl') };
    }
    const content = await this.store.readRecording(this.portalId, call.callId);
    if (!content) return { error: missing() };
    const filename = call.recording.file!.filename ?? 'recording.mp3';
    try {
      const { status, text } = await postMultipart(
        new URL(uploadUrl),
        filename,
        content,
        this.options.uploadTimeoutMs,
        signal,
      );
      let body: { result?: unknown; error?: string; error_description?: string } = {};
      try {
        body = JSON.parse(text) as typeof body;
      } catch {
        // not JSON: judged by the status alone
      }
      const ok = status >= 200 && status < 300;
      if (ok && !body.error) return { result: body.result ?? body };
      const description = `uploadUrl answered HTTP ${status}${body.error ? ` ${body.error}` : ''}`;
      const kind = status >= 500 || status === 429 ? 'server' : 'invalid';
      return { error: new PortalError(kind, body.error ?? '', description, status) };
    } catch (error) {
      // Stopped with the delivery: not the call's failure, nothing is counted (the batch is abandoned).
      if (signal.aborted) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ETIMEDOUT') {
        return {
          error: new PortalError(
            'timeout',
            'ETIMEDOUT',
            `uploadUrl: nothing moved for ${Math.round(this.options.uploadTimeoutMs / 1000)} s`,
          ),
        };
      }
      return { error: new PortalError('network', '', `uploadUrl: ${(error as Error).message}`) };
    }
  }

  /**
   * The portal has the recording (or it was given up): its content leaves the store, unless pushed anew
   * since, or its transcript still needs it (SPEC §12: kept until the service's messages are stored).
   */
  async forget(updated: CallRecord[]): Promise<void> {
    for (const call of updated) {
      const recording = call.recording.file;
      if (transcriptNeedsFile(call)) continue;
      if (recording?.bytes !== undefined && (call.recording.attached || call.recording.failed)) {
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
    const stale = call.recording.file?.storedAt !== sent?.recording.file?.storedAt;
    return stale ? commands.filter((command) => command.step !== 'uploadRecord') : commands;
  }
}

/**
 * POSTs `content` as the multipart field `file` to `url`, a chunk at a time as the socket takes it, and
 * reads at most MAX_UPLOAD_ANSWER_BYTES of the answer. No redirects. `idleMs` without progress either way
 * fails it with ETIMEDOUT; `signal` aborts it.
 */
async function postMultipart(
  url: URL,
  filename: string,
  content: RecordingContent,
  idleMs: number,
  signal: AbortSignal,
): Promise<{ status: number; text: string }> {
  const boundary = `----bridge-${randomUUID()}`;
  const type = filename.endsWith('.wav') ? 'audio/wav' : 'audio/mpeg';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\n` +
      `Content-Type: ${type}\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const request = send(url, {
    method: 'POST',
    signal,
    headers: {
      'content-type': `multipart/form-data; boundary=${boundary}`,
      'content-length': String(head.length + content.bytes + tail.length),
    },
  });
  request.setTimeout(idleMs, () =>
    request.destroy(Object.assign(new Error('no progress'), { code: 'ETIMEDOUT' })),
  );
  const answered = new Promise<IncomingMessage>((resolve, reject) => {
    request.once('response', resolve);
    request.once('error', reject);
  });
  // Until the answer is awaited below, a failure while sending is observed here and rethrown there.
  answered.catch(() => undefined);
  const written = (chunk: Buffer) =>
    new Promise<void>((resolve, reject) => {
      request.write(chunk, (error) => (error ? reject(error) : resolve()));
    });
  try {
    await written(head);
    for await (const chunk of content.chunks) {
      if (request.destroyed) break;
      await written(chunk);
    }
    request.end(tail);
  } catch (error) {
    request.destroy(error as Error);
  }
  const response = await answered;
  const parts: Buffer[] = [];
  let read = 0;
  for await (const part of response as AsyncIterable<Buffer>) {
    read += part.length;
    if (read > MAX_UPLOAD_ANSWER_BYTES) {
      response.destroy();
      break;
    }
    parts.push(part);
  }
  return { status: response.statusCode ?? 0, text: Buffer.concat(parts).toString('utf8') };
}

function missing(): PortalError {
  return new PortalError('invalid', '', 'recording: its content is no longer in the store');
}
