import { CallEvent, CallRecord, CallState } from '../calls/call';
import { ClickClaims } from '../calls/click-match';
import { ClickRow } from '../calls/click-ledger';
import { DeliveryLease } from './coordination-store';

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
   * Stores a recording's content (replacing one held before) and applies `mutate` to its call, in one synced
   * transaction, under the call's `recording.storedAt` after `mutate`; undefined (nothing stored) when the bridge never heard of the call. With `fence`, as in
   * updateCalls.
   */
  abstract putRecording(
    portalId: string,
    callId: string,
    content: Buffer,
    mutate: CallMutator,
    fence?: DeliveryLease,
  ): Promise<CallRecord | undefined>;

  /** A recording's content, read right before it is uploaded; undefined when none is held. */
  abstract getRecording(portalId: string, callId: string): Promise<Buffer | undefined>;

  /**
   * Forgets a recording's content (the portal has it, or it was given up); with `storedAt`, only the content
   * stored then (a file pushed again since stays).
   */
  abstract deleteRecording(portalId: string, callId: string, storedAt?: number): Promise<void>;

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

  /** The earliest time any call has a step due (ms epoch), or undefined when none. */
  abstract nextDueAt(portalId: string): Promise<number | undefined>;

  abstract queueStats(portalId: string): Promise<QueueStats>;

  /**
   * Many portals (SPEC.md §8): the queue of every portal together (`failed` left 0: not counted), and the
   * `limit` portals with the deepest queues, deepest first.
   */
  abstract deepestQueues(
    limit: number,
  ): Promise<{ total: QueueStats; top: (QueueStats & { portalId: string })[] }>;

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

  /** Proves the store takes writes (readiness). */
  abstract checkWritable(): Promise<void>;

  abstract close(): Promise<void>;
}
