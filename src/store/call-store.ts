import { CallEvent, CallRecord, CallState } from '../calls/call';
import { ClickClaims } from '../calls/click-match';
import { ClickRow } from '../calls/click-ledger';
import { DeliveryLease } from './coordination-store';

/** Chunks recordings are stored in: one read or write never handles more (SQLite blocks the loop while it does). */
export const RECORDING_CHUNK_BYTES = 1024 * 1024;

/** Recording bytes written by `stageRecording`, not yet any call's. */
export interface StagedRecording {
  blobId: string;
  bytes: number;
}

/** A held recording: its size, and its content read one chunk at a time. */
export interface RecordingContent {
  bytes: number;
  chunks: AsyncIterable<Buffer>;
}

/** A recording's content was forgotten while it was being read: what was read is not the whole file. */
export class RecordingGoneError extends Error {
  constructor(callId: string) {
    super(`the recording of call ${callId} was forgotten while it was read`);
  }
}

/** The portal's held recordings would pass RECORDING_QUOTA_MB: nothing was stored. */
export class RecordingQuotaError extends Error {
  constructor(readonly quotaBytes: number) {
    super(
      `the portal's stored recordings would pass RECORDING_QUOTA_MB (${Math.round(quotaBytes / 1_000_000)} MB)`,
    );
  }
}

/**
 * `source` in chunks of exactly `size` bytes (the last one shorter), copied out of the pieces it comes in,
 * so what is held is one chunk plus one piece.
 */
export async function* rechunk(
  source: AsyncIterable<Buffer>,
  size = RECORDING_CHUNK_BYTES,
): AsyncIterable<Buffer> {
  let chunk = Buffer.allocUnsafe(size);
  let filled = 0;
  for await (const piece of source) {
    let offset = 0;
    while (offset < piece.length) {
      const copied = piece.copy(chunk, filled, offset, Math.min(piece.length, offset + size - filled));
      filled += copied;
      offset += copied;
      if (filled === size) {
        yield chunk;
        chunk = Buffer.allocUnsafe(size);
        filled = 0;
      }
    }
  }
  if (filled > 0) yield chunk.subarray(0, filled);
}

/** `CallStore.putRecording`'s request: staged content to make the call's recording. */
export interface PutRecording {
  portalId: string;
  callId: string;
  staged: StagedRecording;
  mutate: CallMutator;
  fence?: DeliveryLease;
  quotaBytes?: number;
}

/** What one intake transaction did with the events of one PBX request. */
export interface IngestResult {
  accepted: number;
  duplicates: number;
}

/**
 * Applies one new event to a call (undefined: the bridge never heard of it), inside the store's transaction.
 * `clicks`: the stored clicks to the batch's numbers and CALL_IDs (locked until the commit), for matching the
 * call to a click-to-call (click-match.ts); what it claims is written in the same transaction.
 */
export type EventApplier = (
  call: CallRecord | undefined,
  event: CallEvent,
  clicks: ClickClaims,
) => CallRecord;
export type CallMutator = (call: CallRecord) => CallRecord;

/** A call from `phone` (E.164) answered at `answeredAt` (ms epoch): it may complete earlier missed calls' tasks. */
export interface AnsweredCall {
  callId: string;
  phone: string;
  answeredAt: number;
}

/** One line's count of calls (`CallStore.callsByLine`). */
export interface LineCalls {
  line?: string;
  calls: number;
}

/** A grouped queue row as both engines return it (`deepestQueues`). */
export interface QueueRow {
  portal_id?: string;
  depth: number;
  oldest: number | null;
}

/** `deepestQueues`' answer from the total row and the per-portal rows. */
export function deepestQueuesOf(
  total: QueueRow,
  top: QueueRow[],
): { total: QueueStats; top: (QueueStats & { portalId: string })[] } {
  const stats = (row: QueueRow): QueueStats => ({
    depth: Number(row.depth),
    oldestCreatedAt: row.oldest === null ? undefined : Number(row.oldest),
    failed: 0,
  });
  return { total: stats(total), top: top.map((row) => ({ portalId: row.portal_id ?? '', ...stats(row) })) };
}

export interface QueueStats {
  /** Calls with portal work left (held calls included). */
  depth: number;
  /** Creation time of the oldest call with portal work left (ms epoch). */
  oldestCreatedAt?: number;
  failed: number;
}

/**
 * The durable store, the injection token for one implementation per database engine. Every write is a
 * committed, synced transaction before its promise resolves: that is what lets intake answer 202.
 */
/** `CallStore.lookDue`'s answer: the due calls, or when none is, the earliest due time of any (none: undefined). */
export interface DueLook {
  due: CallRecord[];
  nextDueAt?: number;
}

/** A portal with work of one kind due (`CallStore.portalsWithDueWork`). */
export interface DueWorkOf {
  portalId: string;
  kind: 'call' | 'dial' | 'event';
}

export abstract class CallStore {
  /**
   * Stores each event not seen before under its `(callId, event)` key and applies it to its call, all in one
   * transaction per batch of requests. Returns one result per submitted list, in order.
   */
  abstract ingest(portalId: string, submissions: CallEvent[][], apply: EventApplier): Promise<IngestResult[]>;

  abstract findCall(portalId: string, callId: string): Promise<CallRecord | undefined>;

  /**
   * Click-to-call: keeps a click for matching, idempotent by its CALL_ID (a repeat changes nothing; a row a
   * `crmCallId` made before the click arrived gets the click's details and stays taken).
   */
  abstract saveClick(portalId: string, click: ClickRow): Promise<void>;

  /** A stored click by its CALL_ID (operators, specs). */
  abstract findClick(portalId: string, portalCallId: string): Promise<ClickRow | undefined>;

  /**
   * Calls whose next step is due, oldest due first, leaving out the ones named in `skip` and those whose
   * next step is one of `exceptSteps` (steps waiting for the portal's operating time).
   */
  abstract dueCalls(
    portalId: string,
    now: number,
    limit: number,
    skip: ReadonlySet<string>,
    exceptSteps?: readonly string[],
  ): Promise<CallRecord[]>;

  /**
   * Read-modify-write of the named calls in one transaction (unknown ids are skipped). With `fence`, the
   * transaction commits only while that lease is still the portal's: otherwise it throws LeaseLostError
   * and stores nothing, so a replica that lost delivery to another cannot overwrite the newer state.
   */
  abstract updateCalls(
    portalId: string,
    callIds: string[],
    mutate: CallMutator,
    fence?: DeliveryLease,
  ): Promise<CallRecord[]>;

  /**
   * Delivery's fenced write, as `updateCalls(portalId, ids of calls, mutate, fence)`, starting from `calls`
   * as this store returned them (dueCalls, or an earlier updateCallsFrom): where the store can tell that a
   * call is unchanged since (PostgreSQL: its row version), `mutate` is applied to that copy and the batch is
   * written in one statement that also checks the lease, so a batch costs one round trip; a call changed
   * since (intake stored an event) is read again and written as updateCalls does. Same guarantees as
   * updateCalls with `fence`: nothing is stored and LeaseLostError is thrown once the lease has moved on.
   */
  updateCallsFrom(
    portalId: string,
    calls: readonly CallRecord[],
    mutate: CallMutator,
    fence: DeliveryLease,
  ): Promise<CallRecord[]> {
    return this.updateCalls(
      portalId,
      calls.map((call) => call.callId),
      mutate,
      fence,
    );
  }

  /**
   * Writes a recording's bytes, as they arrive, in chunks of at most RECORDING_CHUNK_BYTES that no call
   * refers to yet (`putRecording` makes them the call's); neither engine ever holds or writes the whole
   * file at once. Chunks never taken go with `discardStagedRecording`, or with `expireRecordings` after a
   * crash. A `source` that throws leaves nothing behind and rethrows.
   */
  abstract stageRecording(portalId: string, source: AsyncIterable<Buffer>): Promise<StagedRecording>;

  abstract discardStagedRecording(portalId: string, staged: StagedRecording): Promise<void>;

  /**
   * Makes staged content the call's recording (replacing one held before) and applies `mutate` to its call,
   * in one synced transaction, under the call's `recording.storedAt` after `mutate`; undefined (nothing
   * stored) when the bridge never heard of the call. With `fence`, as in updateCalls. With `quotaBytes`, a
   * portal whose recordings (this one in, the call's previous one out) would pass it gets a
   * RecordingQuotaError and nothing changes. The caller discards the staged chunks when this throws.
   */
  abstract putRecording(put: PutRecording): Promise<CallRecord | undefined>;

  /** The recording's content a chunk at a time (each read is one chunk), or undefined when none is held. */
  abstract readRecording(portalId: string, callId: string): Promise<RecordingContent | undefined>;

  /**
   * A recording's content as one buffer, read right before it goes in a request's FILE_CONTENT (at most
   * RECORDING_REQUEST_MAX_MB); undefined when none is held.
   */
  async getRecording(portalId: string, callId: string): Promise<Buffer | undefined> {
    const content = await this.readRecording(portalId, callId);
    if (!content) return undefined;
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of content.chunks) chunks.push(chunk);
    } catch (error) {
      // Forgotten meanwhile: none is held now.
      if (error instanceof RecordingGoneError) return undefined;
      throw error;
    }
    return Buffer.concat(chunks);
  }

  /** The bytes of the portal's held recordings (RECORDING_QUOTA_MB). */
  abstract recordingBytes(portalId: string): Promise<number>;

  /**
   * Forgets a recording's content (the portal has it, or it was given up); with `storedAt`, only the content
   * stored then (a file pushed again since stays).
   */
  abstract deleteRecording(portalId: string, callId: string, storedAt?: number): Promise<void>;

  /**
   * Retention of recordings whose call never settled: up to `limit` recordings stored before `storedBefore`
   * go (the call then finds no content and records why), and staged chunks no recording took, written
   * before `orphanedBefore` (a push cut off by a crash). Returns how many recordings went.
   */
  abstract expireRecordings(storedBefore: number, orphanedBefore: number, limit: number): Promise<number>;

  /**
   * Missed-call tasks: read-modify-write, in one transaction, of the portal's calls still awaiting a
   * callback from one of the `answered` numbers (E.164) whose task's deadline is after that answer (ms
   * epoch). Intake calls it when calls are answered; the columns it selects on are kept from
   * `awaitingCallback`. `mutate` decides which answer, if any, completes each call's task.
   */
  abstract updateCallsAwaitingCallback(
    portalId: string,
    answered: readonly AnsweredCall[],
    mutate: CallMutator,
  ): Promise<CallRecord[]>;

  /** Calls in a state, newest change first, for operators. */
  abstract listCalls(portalId: string, state: CallState, limit: number): Promise<CallRecord[]>;

  /**
   * How many of the portal's calls were created since `since` (ms epoch) on each line (docs/API.md "Lines"),
   * busiest first; `line` undefined: calls without one. The page's lines list counts today's with it.
   */
  abstract callsByLine(portalId: string, since: number): Promise<LineCalls[]>;

  /** The earliest time any call has a step due (ms epoch), or undefined when none. */
  abstract nextDueAt(portalId: string): Promise<number | undefined>;

  /**
   * The delivery loop's look at the queue: `dueCalls(portalId, now, limit, skip)`, and when none is due,
   * `nextDueAt` too (when to look again). PostgreSQL answers both in one round trip.
   */
  async lookDue(portalId: string, now: number, limit: number, skip: ReadonlySet<string>): Promise<DueLook> {
    const due = await this.dueCalls(portalId, now, limit, skip);
    if (due.length > 0) return { due };
    return { due, nextDueAt: await this.nextDueAt(portalId) };
  }

  abstract queueStats(portalId: string): Promise<QueueStats>;

  /**
   * Many portals (docs/API.md): the queue of every portal together (`failed` left 0: not counted), and the
   * `limit` portals with the deepest queues, deepest first.
   */
  abstract deepestQueues(
    limit: number,
  ): Promise<{ total: QueueStats; top: (QueueStats & { portalId: string })[] }>;

  /**
   * Many portals: the portals (up to `limit`) with work due now, in one statement over every portal: a call
   * due at `now` (ms epoch, this process's clock, as `dueCalls`), a pending dial request or a `sending` one
   * whose claim ran out, or a pending portal event (those two on the database's clock). What one timer per
   * replica asks each second instead of a loop per portal per worker kind (docs/decisions/tenancy.md).
   */
  abstract portalsWithDueWork(now: number, limit: number): Promise<DueWorkOf[]>;

  /**
   * Retention: deletes up to `limit` settled calls (finished or failed, nothing due) of every portal whose
   * last change was before `before` (ms epoch), oldest first, with their events, in one transaction.
   * Returns how many calls it deleted. Their `(callId, event)` keys are then unknown: a late repeat is new.
   * Up to `limit` clicks (click-to-call) stored before `before` go too.
   */
  abstract deleteSettledCalls(before: number, limit: number): Promise<number>;

  /**
   * Calls `listener` when another process on the same database (a replica) stores work for the portal, so
   * the replica delivering it starts at once instead of at its next look at the queue. Returns a function
   * that stops listening. What is stored through this instance wakes its own process through intake.
   */
  abstract watchNewWork(portalId: string, listener: () => void): () => void;

  /**
   * Calls `listener` with the portal's id when another process stores work for any portal (many portals: a
   * portal with no runtime built here is woken by it). One process alone (SQLite, memory) hears nothing.
   */
  watchAnyNewWork(listener: (portalId: string) => void): () => void {
    void listener;
    return () => undefined;
  }

  /** Proves the store takes writes (readiness). */
  abstract checkWritable(): Promise<void>;

  abstract close(): Promise<void>;
}
