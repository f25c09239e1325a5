import { CallEvent, CallRecord, CallState, idempotencyKey } from '../../calls/call';
import { deliveryPriority } from '../../calls/call-lifecycle';
import { awaitingCallback } from '../../calls/missed-call-task';
import { randomUUID } from 'node:crypto';
import {
  AnsweredCall,
  CallMutator,
  CallStore,
  DueWorkOf,
  EventApplier,
  IngestResult,
  QueueStats,
  RecordingContent,
  RecordingQuotaError,
  StagedRecording,
  rechunk,
} from '../call-store';
import { ClickLedger, ClickRow, clickKeysOf } from '../../calls/click-ledger';
import { assertLeaseHeld, DeliveryLease } from '../coordination-store';
import { MemoryLeaseStore } from './memory-lease-store';

/**
 * The call queue in memory, with the SQLite store's semantics (dueCalls oldest due first with the skip
 * set, fenced all-or-nothing updateCalls, duplicates by `(callId, event)`), for fast unit specs of
 * delivery. Records are copied in and out, as a database would, so a caller cannot change stored state
 * by holding on to an object. Not for production: nothing survives the process.
 */
export class MemoryCallStore extends CallStore {
  private readonly calls = new Map<string, CallRecord>();
  private readonly events = new Set<string>();
  private readonly recordings = new Map<string, { chunks: Buffer[]; bytes: number; storedAt: number }>();
  private readonly staged = new Map<string, Buffer[]>();
  private readonly clicks = new Map<string, ClickRow>();

  /** `leases`: where fenced writes check the lease, as the SQL stores read their `portal_leases` row. */
  constructor(private readonly leases?: MemoryLeaseStore) {
    super();
  }

  async ingest(portalId: string, submissions: CallEvent[][], apply: EventApplier): Promise<IngestResult[]> {
    const staged = new Map<string, CallRecord>();
    const seen = new Set<string>();
    const keys = clickKeysOf(submissions.flat());
    const ledger = new ClickLedger(
      [...this.clicks.entries()]
        .filter(([id]) => JSON.parse(id)[0] === portalId)
        .map(([, row]) => row)
        .filter(
          (row) =>
            keys.portalCallIds.includes(row.portalCallId) ||
            (row.matchedCallId === undefined && keys.phones.includes(row.phoneNumber ?? '')),
        ),
    );
    const results = submissions.map((events) => {
      const result: IngestResult = { accepted: 0, duplicates: 0 };
      for (const event of events) {
        const id = JSON.stringify([portalId, event.callId]);
        const call = staged.get(id) ?? this.read(portalId, event.callId);
        const key = JSON.stringify([portalId, event.callId, idempotencyKey(event, call)]);
        if (this.events.has(key) || seen.has(key)) {
          result.duplicates += 1;
          continue;
        }
        seen.add(key);
        result.accepted += 1;
        staged.set(id, copy(apply(call && copy(call), copy(event), ledger)));
      }
      return result;
    });
    for (const key of seen) this.events.add(key);
    for (const [id, call] of staged) this.calls.set(id, call);
    for (const claimed of ledger.changed) {
      const id = JSON.stringify([portalId, claimed.portalCallId]);
      this.clicks.set(id, { ...(this.clicks.get(id) ?? claimed), matchedCallId: claimed.matchedCallId });
    }
    return results;
  }

  async saveClick(portalId: string, click: ClickRow): Promise<void> {
    const id = JSON.stringify([portalId, click.portalCallId]);
    const held = this.clicks.get(id);
    if (held?.clickedAt !== undefined) return;
    this.clicks.set(id, { ...click, matchedCallId: held?.matchedCallId });
  }

  async findClick(portalId: string, portalCallId: string): Promise<ClickRow | undefined> {
    const row = this.clicks.get(JSON.stringify([portalId, portalCallId]));
    return row && { ...row };
  }

  async findCall(portalId: string, callId: string): Promise<CallRecord | undefined> {
    return this.read(portalId, callId);
  }

  async dueCalls(
    portalId: string,
    now: number,
    limit: number,
    skip: ReadonlySet<string>,
    exceptSteps: readonly string[] = [],
  ): Promise<CallRecord[]> {
    return this.ofPortal(portalId)
      .filter((call) => call.dueAt !== undefined && call.dueAt !== null && call.dueAt <= now)
      .filter((call) => !call.nextStep || !exceptSteps.includes(call.nextStep))
      .sort((a, b) => deliveryPriority(a) - deliveryPriority(b) || a.dueAt! - b.dueAt!)
      .filter((call) => !skip.has(call.callId))
      .slice(0, limit)
      .map(copy);
  }

  async updateCalls(
    portalId: string,
    callIds: string[],
    mutate: CallMutator,
    fence?: DeliveryLease,
  ): Promise<CallRecord[]> {
    if (fence) assertLeaseHeld(this.leases?.holder(portalId), fence);
    // All or nothing, as one transaction: a mutator that throws leaves every call as it was.
    const next = callIds.flatMap((callId) => {
      const call = this.read(portalId, callId);
      return call ? [copy(mutate(call))] : [];
    });
    for (const call of next) this.calls.set(JSON.stringify([portalId, call.callId]), call);
    return next.map(copy);
  }

  async stageRecording(_portalId: string, source: AsyncIterable<Buffer>): Promise<StagedRecording> {
    const chunks: Buffer[] = [];
    for await (const chunk of rechunk(source)) chunks.push(Buffer.from(chunk));
    const staged = { blobId: randomUUID(), bytes: chunks.reduce((sum, chunk) => sum + chunk.length, 0) };
    this.staged.set(staged.blobId, chunks);
    return staged;
  }

  async discardStagedRecording(_portalId: string, staged: StagedRecording): Promise<void> {
    this.staged.delete(staged.blobId);
  }

  async putRecording(
    portalId: string,
    callId: string,
    staged: StagedRecording,
    mutate: CallMutator,
    fence?: DeliveryLease,
    quotaBytes?: number,
  ): Promise<CallRecord | undefined> {
    const key = JSON.stringify([portalId, callId]);
    if (quotaBytes !== undefined && this.read(portalId, callId)) {
      const held = [...this.recordings]
        .filter(([id]) => id !== key && JSON.parse(id)[0] === portalId)
        .reduce((sum, [, recording]) => sum + recording.bytes, 0);
      if (held + staged.bytes > quotaBytes) throw new RecordingQuotaError(quotaBytes);
    }
    const [next] = await this.updateCalls(portalId, [callId], mutate, fence);
    const storedAt = next?.recording?.storedAt ?? Date.now();
    const chunks = this.staged.get(staged.blobId) ?? [];
    if (next) this.recordings.set(key, { chunks, bytes: staged.bytes, storedAt });
    this.staged.delete(staged.blobId);
    return next;
  }

  async readRecording(portalId: string, callId: string): Promise<RecordingContent | undefined> {
    const recording = this.recordings.get(JSON.stringify([portalId, callId]));
    if (!recording) return undefined;
    async function* chunks(): AsyncIterable<Buffer> {
      for (const chunk of recording!.chunks) yield chunk;
    }
    return { bytes: recording.bytes, chunks: chunks() };
  }

  async recordingBytes(portalId: string): Promise<number> {
    return [...this.recordings]
      .filter(([id]) => JSON.parse(id)[0] === portalId)
      .reduce((sum, [, recording]) => sum + recording.bytes, 0);
  }

  async deleteRecording(portalId: string, callId: string, storedAt?: number): Promise<void> {
    const key = JSON.stringify([portalId, callId]);
    if (storedAt === undefined || this.recordings.get(key)?.storedAt === storedAt) {
      this.recordings.delete(key);
    }
  }

  async expireRecordings(storedBefore: number, _orphanedBefore: number, limit: number): Promise<number> {
    const stale = [...this.recordings].filter(([, recording]) => recording.storedAt < storedBefore);
    for (const [key] of stale.slice(0, limit)) this.recordings.delete(key);
    return Math.min(stale.length, limit);
  }

  async updateCallsAwaitingCallback(
    portalId: string,
    answered: readonly AnsweredCall[],
    mutate: CallMutator,
  ): Promise<CallRecord[]> {
    const waiting = this.ofPortal(portalId).filter((call) => {
      const callback = awaitingCallback(call);
      return answered.some(
        (answer) => callback?.phone === answer.phone && callback.until > answer.answeredAt,
      );
    });
    return this.updateCalls(
      portalId,
      waiting.map((call) => call.callId),
      mutate,
    );
  }

  async listCalls(portalId: string, state: CallState, limit: number): Promise<CallRecord[]> {
    return this.ofPortal(portalId)
      .filter((call) => call.state === state)
      .sort((a, b) => b.updatedAt - a.updatedAt)
      .slice(0, limit)
      .map(copy);
  }

  async nextDueAt(portalId: string): Promise<number | undefined> {
    const due = this.ofPortal(portalId).flatMap((call) => (call.dueAt == null ? [] : [call.dueAt]));
    return due.length === 0 ? undefined : Math.min(...due);
  }

  /** Calls only: the in-memory dial and event stores are single-portal mode's. */
  async portalsWithDueWork(now: number, limit: number): Promise<DueWorkOf[]> {
    const portals = new Set<string>();
    for (const call of this.calls.values()) {
      if (call.dueAt != null && call.dueAt <= now) portals.add(call.portalId);
    }
    return [...portals].slice(0, limit).map((portalId) => ({ portalId, kind: 'call' }));
  }

  async deepestQueues(
    limit: number,
  ): Promise<{ total: QueueStats; top: (QueueStats & { portalId: string })[] }> {
    const waiting = [...this.calls.values()].filter((call) => call.dueAt != null);
    const stats = (calls: typeof waiting): QueueStats => ({
      depth: calls.length,
      oldestCreatedAt: calls.length === 0 ? undefined : Math.min(...calls.map((call) => call.createdAt)),
      failed: 0,
    });
    const portals = [...new Set(waiting.map((call) => call.portalId))];
    const top = portals
      .map((portalId) => ({ portalId, ...stats(waiting.filter((call) => call.portalId === portalId)) }))
      .sort((a, b) => b.depth - a.depth || a.portalId.localeCompare(b.portalId))
      .slice(0, limit);
    return { total: stats(waiting), top };
  }

  async queueStats(portalId: string): Promise<QueueStats> {
    const calls = this.ofPortal(portalId);
    const waiting = calls.filter((call) => call.dueAt != null);
    return {
      depth: waiting.length,
      oldestCreatedAt: waiting.length === 0 ? undefined : Math.min(...waiting.map((call) => call.createdAt)),
      failed: calls.filter((call) => call.state === 'failed').length,
    };
  }

  async deleteSettledCalls(before: number, limit: number): Promise<number> {
    const settled = [...this.calls.values()]
      .filter(
        (call) =>
          call.dueAt == null &&
          (call.state === 'finished' || call.state === 'failed') &&
          call.updatedAt < before,
      )
      .sort((a, b) => a.updatedAt - b.updatedAt)
      .slice(0, limit);
    for (const call of settled) {
      this.calls.delete(JSON.stringify([call.portalId, call.callId]));
      this.recordings.delete(JSON.stringify([call.portalId, call.callId]));
      for (const key of [...this.events]) {
        const [portal, callId] = JSON.parse(key) as string[];
        if (portal === call.portalId && callId === call.callId) this.events.delete(key);
      }
    }
    for (const [id, click] of this.clicks) {
      if ((click.clickedAt ?? 0) < before) this.clicks.delete(id);
    }
    return settled.length;
  }

  /** One process holds the memory: nobody else stores work it must hear of. */
  watchNewWork(): () => void {
    return () => undefined;
  }

  async checkWritable(): Promise<void> {}

  async close(): Promise<void> {}

  private read(portalId: string, callId: string): CallRecord | undefined {
    const call = this.calls.get(JSON.stringify([portalId, callId]));
    return call && copy(call);
  }

  /** In insertion order, so equal due times keep the order calls came in (as SQLite's rowid order does). */
  private ofPortal(portalId: string): CallRecord[] {
    return [...this.calls.values()].filter((call) => call.portalId === portalId);
  }
}

function copy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
