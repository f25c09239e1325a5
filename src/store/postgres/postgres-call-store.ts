import { PoolClient } from 'pg';
import { CallEvent, CallRecord } from '../../calls/call';
import { callOf } from '../call-rows';
import {
  AnsweredCall,
  CallMutator,
  DueLook,
  EventApplier,
  IngestResult,
  PutRecording,
  RecordingQuotaError,
} from '../call-store';
import { assertLeaseHeld, DeliveryLease } from '../coordination-store';
import { Fence } from '../fence';
import { queueStatements } from '../queue-statements';
import { SqlCallStore } from '../sql-call-store';
import { announceWork, DURABLE, NEW_WORK_CHANNEL, saveCalls, workPayload } from './postgres-call-rows';
import { POSTGRES_DIALECT, PostgresDatabase } from './postgres-database';
import { PostgresFencedWrites } from './postgres-fenced-writes';
import { PostgresIntake } from './postgres-intake';
import { StatementGroup } from './statement-group';

/** One portal's `lookDue` or `dueCalls`. */
interface LookRequest {
  portalId: string;
  now: number;
  limit: number;
  skip: ReadonlySet<string>;
  exceptSteps: readonly string[];
}

interface CallRow {
  call_id: string;
  data: string;
  /** The row version (`xmin`): any write of the row changes it. */
  version?: string;
}

/**
 * The store for several replicas: PostgreSQL, one transaction per intake batch or delivery update, each
 * committed (and so on disk, synchronous_commit on) before its promise resolves. Replicas write the same
 * calls concurrently, so every read-modify-write locks what it changes (intake: `PostgresIntake`; delivery's
 * batch writes: `PostgresFencedWrites`), always in call id order. The single statements are both engines'
 * (`SqlCallStore`).
 */
export class PostgresCallStore extends SqlCallStore {
  /**
   * The row version each call this store returned was read or written at (`updateCallsFrom`): a write naming
   * it changes the row only while no other write came between.
   */
  private readonly versions = new WeakMap<CallRecord, string>();

  /**
   * Who listens for a portal's new work, by NOTIFY payload: one handler on the channel for the whole store,
   * so a notification costs one map look, not a comparison per listening portal.
   */
  private readonly workListeners = new Map<string, Set<() => void>>();
  private readonly anyWorkListeners = new Set<(portalId: string) => void>();
  private stopListening?: () => void;

  /** Delivery loops' looks, many portals' in one statement under load. */
  private readonly looks = new StatementGroup<LookRequest, DueLook>((asked) => this.lookDueOf(asked));
  private readonly intake: PostgresIntake;
  private readonly writes: PostgresFencedWrites;

  constructor(private readonly db: PostgresDatabase) {
    super(db);
    this.intake = new PostgresIntake(db);
    this.writes = new PostgresFencedWrites(db);
  }

  /**
   * Stores each event not seen before and applies it to its call, in one synced transaction shared with
   * the other portals' intakes asked while one was at the database (`PostgresIntake`).
   */
  ingest(portalId: string, submissions: CallEvent[][], apply: EventApplier): Promise<IngestResult[]> {
    return this.intake.run(portalId, submissions, apply);
  }

  /** The look's statement (`lookDue`), many portals' in one under load; the earliest due time goes unread. */
  async dueCalls(
    portalId: string,
    now: number,
    limit: number,
    skip: ReadonlySet<string>,
    exceptSteps: readonly string[] = [],
  ): Promise<CallRecord[]> {
    return (await this.looks.run({ portalId, now, limit, skip, exceptSteps })).due;
  }

  /**
   * The due calls as dueCalls reads them, and with none, the earliest due time of all: one statement for
   * every portal's look made while the previous one was at the database (`StatementGroup`).
   */
  override lookDue(
    portalId: string,
    now: number,
    limit: number,
    skip: ReadonlySet<string>,
  ): Promise<DueLook> {
    return this.looks.run({ portalId, now, limit, skip, exceptSteps: [] });
  }

  /**
   * One statement for the looks of several portals: each portal's due calls (less its own `skip`, and those
   * whose next step is one of its `exceptSteps`), oldest first within its limit, then a row with its
   * earliest due time.
   */
  private async lookDueOf(asked: readonly LookRequest[]): Promise<DueLook[]> {
    const skipped = asked.flatMap((look, index) =>
      [...look.skip].map((callId) => [index + 1, callId] as const),
    );
    const steps = asked.flatMap((look, index) => look.exceptSteps.map((step) => [index + 1, step] as const));
    const rows = await this.db.query<CallRow & { look: number; next_due: number | null }>(
      `WITH q AS (
         SELECT * FROM unnest($1::text[], $2::bigint[], $3::int[]) WITH ORDINALITY AS q(portal_id, now, lim, look)
       ), s AS (
         SELECT * FROM unnest($4::int[], $5::text[]) AS s(look, call_id)
       ), x AS (
         SELECT * FROM unnest($6::int[], $7::text[]) AS x(look, step)
       )
       SELECT look, call_id, data, version, next_due FROM (
         SELECT q.look, c.call_id, c.data, c.version, NULL::bigint AS next_due, c.priority, c.due_at
         FROM q CROSS JOIN LATERAL (
           SELECT call_id, data, xmin::text AS version, priority, due_at FROM calls
           WHERE portal_id = q.portal_id AND due_at IS NOT NULL AND due_at <= q.now
             AND NOT EXISTS (SELECT 1 FROM s WHERE s.look = q.look AND s.call_id = calls.call_id)
             AND NOT EXISTS (SELECT 1 FROM x WHERE x.look = q.look AND x.step = calls.next_step)
           ORDER BY priority, due_at LIMIT q.lim
         ) AS c
         UNION ALL
         SELECT q.look, NULL, NULL, NULL,
           (SELECT MIN(due_at) FROM calls WHERE portal_id = q.portal_id AND due_at IS NOT NULL), NULL, NULL
         FROM q
       ) AS looked ORDER BY look, call_id IS NULL, priority, due_at`,
      [
        asked.map((look) => look.portalId),
        asked.map((look) => look.now),
        asked.map((look) => look.limit),
        skipped.map(([index]) => index),
        skipped.map(([, callId]) => callId),
        steps.map(([index]) => index),
        steps.map(([, step]) => step),
      ],
      'look-due',
    );
    const looks = asked.map((): DueLook => ({ due: [] }));
    for (const row of rows) {
      const look = looks[Number(row.look) - 1];
      if (row.call_id !== null) look.due.push(this.versioned(row));
      else if (look.due.length === 0) look.nextDueAt = row.next_due ?? undefined;
    }
    return looks;
  }

  async updateCalls(
    portalId: string,
    callIds: string[],
    mutate: CallMutator,
    fence?: DeliveryLease,
  ): Promise<CallRecord[]> {
    return this.db.transaction(async (client, atCommit) => {
      if (fence) await this.checkFence(client, portalId, fence);
      const calls = await this.lockCalls(client, portalId, [...new Set(callIds)].sort());
      const updated = callIds.flatMap((callId) => {
        const call = calls.get(callId);
        if (!call) return [];
        const next = mutate(call);
        calls.set(callId, next);
        return [next];
      });
      await saveCalls(client, updated);
      // Delivery's own writes (fenced) concern only the deliverer; an operator's re-queue wakes it.
      if (!fence) announceWork(atCommit, this.db.schema, portalId, updated);
      return updated;
    });
  }

  /**
   * One statement for the batch (shared with other portals' batches written at the same moment:
   * `StatementGroup`): the lease row share-locked (a takeover waits for this write, or this write sees it),
   * the calls still at the version they were read at locked in id order, and those written. A call written
   * by anyone else since is left for updateCalls' read-modify-write (fenced again).
   */
  override async updateCallsFrom(
    portalId: string,
    calls: readonly CallRecord[],
    mutate: CallMutator,
    fence: DeliveryLease,
  ): Promise<CallRecord[]> {
    const known = calls.filter((call) => this.versions.has(call));
    const next = new Map<string, CallRecord>();
    for (const call of known) next.set(call.callId, mutate(call));
    const written = new Map<string, CallRecord>();
    if (known.length > 0) {
      const versions = await this.writes.run({
        portalId,
        fence,
        known: known.map((call) => [call.callId, this.versions.get(call)!]),
        rows: [...next.values()],
      });
      for (const [callId, version] of versions) {
        const call = next.get(callId)!;
        this.versions.set(call, version);
        written.set(callId, call);
      }
    }
    // Calls read without a version, or written by someone else since: read, changed and written again.
    const rest = calls.filter((call) => !written.has(call.callId)).map((call) => call.callId);
    const again = rest.length > 0 ? await this.updateCalls(portalId, rest, mutate, fence) : [];
    const byId = new Map(again.map((call) => [call.callId, call]));
    return calls.flatMap((call) => {
      const updated = written.get(call.callId) ?? byId.get(call.callId);
      return updated ? [updated] : [];
    });
  }

  async putRecording(put: PutRecording): Promise<CallRecord | undefined> {
    const { portalId, callId, staged, mutate, fence, quotaBytes } = put;
    return this.db.transaction(async (client, atCommit) => {
      if (fence) await this.checkFence(client, portalId, fence);
      const call = (await this.lockCalls(client, portalId, [callId])).get(callId);
      if (!call) return undefined;
      if (quotaBytes !== undefined) {
        // Pushes to one portal at once are counted one after the other.
        await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 26))', [portalId]);
        const held = queueStatements.recordingBytes(POSTGRES_DIALECT, portalId, callId);
        const [row] = (await client.query<{ bytes: number }>(held.text, held.values)).rows;
        if (Number(row.bytes) + staged.bytes > quotaBytes) throw new RecordingQuotaError(quotaBytes);
      }
      const next = mutate(call);
      await client.query(
        `DELETE FROM recording_chunks WHERE blob_id IN
           (SELECT blob_id FROM recordings WHERE portal_id = $1 AND call_id = $2)`,
        [portalId, callId],
      );
      await client.query(
        `INSERT INTO recordings (portal_id, call_id, bytes, stored_at, content, blob_id)
         VALUES ($1, $2, $3, $4, '', $5)
         ON CONFLICT (portal_id, call_id) DO UPDATE SET bytes = excluded.bytes, stored_at = excluded.stored_at,
           content = excluded.content, blob_id = excluded.blob_id`,
        [portalId, callId, staged.bytes, next.recording.file?.storedAt ?? Date.now(), staged.blobId],
      );
      await saveCalls(client, [next]);
      if (!fence) announceWork(atCommit, this.db.schema, portalId, [next]);
      return next;
    }, DURABLE);
  }

  /** FOR SHARE: a takeover (an UPDATE of the lease row) waits for this transaction, or this one sees it. */
  private async checkFence(client: PoolClient, portalId: string, fence: DeliveryLease): Promise<void> {
    const holder = await client.query<Fence>(
      'SELECT owner, epoch FROM portal_leases WHERE portal_id = $1 FOR SHARE',
      [portalId],
    );
    assertLeaseHeld(holder.rows[0], fence);
  }

  async deleteRecording(portalId: string, callId: string, storedAt?: number): Promise<void> {
    await this.db.query(
      `WITH gone AS (
         DELETE FROM recordings WHERE portal_id = $1 AND call_id = $2 AND ($3::bigint IS NULL OR stored_at = $3)
         RETURNING blob_id
       )
       DELETE FROM recording_chunks c USING gone WHERE c.blob_id = gone.blob_id`,
      [portalId, callId, storedAt ?? null],
    );
  }

  async expireRecordings(storedBefore: number, orphanedBefore: number, limit: number): Promise<number> {
    const expired = await this.db.query<{ call_id: string }>(
      `WITH stale AS (
         SELECT portal_id, call_id FROM recordings WHERE stored_at < $1 ORDER BY stored_at LIMIT $2
         FOR UPDATE SKIP LOCKED
       ), gone AS (
         DELETE FROM recordings r USING stale s WHERE r.portal_id = s.portal_id AND r.call_id = s.call_id
         RETURNING r.call_id, r.blob_id
       ), chunks AS (
         DELETE FROM recording_chunks c USING gone WHERE c.blob_id = gone.blob_id
       )
       SELECT call_id FROM gone`,
      [storedBefore, limit],
    );
    await this.db.all(queueStatements.deleteOrphanChunks(POSTGRES_DIALECT, orphanedBefore, limit));
    return expired.length;
  }

  /**
   * Not fenced (intake runs it on any replica, like `ingest`): the rows are locked in id order, so delivery's
   * fenced writes to the same calls wait for it or it for them.
   */
  async updateCallsAwaitingCallback(
    portalId: string,
    answered: readonly AnsweredCall[],
    mutate: CallMutator,
  ): Promise<CallRecord[]> {
    return this.db.transaction(async (client, atCommit) => {
      const rows = await client.query<CallRow>(
        `SELECT call_id, data FROM calls c
         WHERE c.portal_id = $1 AND c.callback_phone IS NOT NULL AND EXISTS (
           SELECT 1 FROM unnest($2::text[], $3::bigint[]) AS a(phone, answered_at)
           WHERE c.callback_phone = a.phone AND c.callback_until > a.answered_at)
         ORDER BY call_id FOR UPDATE`,
        [portalId, answered.map((answer) => answer.phone), answered.map((answer) => answer.answeredAt)],
      );
      const calls = rows.rows.map(callOf);
      const updated = calls.map((call) => mutate(call));
      const changed = updated.filter((call, index) => call !== calls[index]);
      await saveCalls(client, changed);
      announceWork(atCommit, this.db.schema, portalId, changed);
      return updated;
    }, DURABLE);
  }

  watchNewWork(portalId: string, listener: () => void): () => void {
    const key = workPayload(this.db.schema, portalId);
    let listeners = this.workListeners.get(key);
    if (!listeners) this.workListeners.set(key, (listeners = new Set()));
    listeners.add(listener);
    this.listenForWork();
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0 && this.workListeners.get(key) === listeners) this.workListeners.delete(key);
    };
  }

  override watchAnyNewWork(listener: (portalId: string) => void): () => void {
    this.anyWorkListeners.add(listener);
    this.listenForWork();
    return () => this.anyWorkListeners.delete(listener);
  }

  private listenForWork(): void {
    const prefix = workPayload(this.db.schema, '');
    this.stopListening ??= this.db.listen(NEW_WORK_CHANNEL, (payload, own) => {
      // Sent by this process: whatever stored that work woke delivery here itself (intake, a re-queue, a
      // pushed recording); hearing it again would only make the loop look at the queue once more.
      if (own) return;
      for (const listener of this.workListeners.get(payload) ?? []) listener();
      if (this.anyWorkListeners.size === 0 || !payload.startsWith(prefix)) return;
      const portalId = payload.slice(prefix.length);
      for (const listener of this.anyWorkListeners) listener(portalId);
    });
  }

  /**
   * One statement: the calls are row-locked before they go, so a call intake or an operator is changing
   * right now is skipped (and re-checked: a call re-queued meanwhile no longer qualifies). Replicas running
   * this at once skip each other's rows, so every replica may run it.
   */
  async deleteSettledCalls(before: number, limit: number): Promise<number> {
    const deleted = await this.db.query<{ call_id: string }>(
      `WITH settled AS (
         SELECT portal_id, call_id FROM calls
         WHERE due_at IS NULL AND state IN ('finished', 'failed', 'ignored') AND updated_at < $1
         ORDER BY updated_at LIMIT $2
         FOR UPDATE SKIP LOCKED
       ), events AS (
         DELETE FROM call_events e USING settled s WHERE e.portal_id = s.portal_id AND e.call_id = s.call_id
       ), recordings AS (
         DELETE FROM recordings r USING settled s WHERE r.portal_id = s.portal_id AND r.call_id = s.call_id
         RETURNING r.blob_id
       ), chunks AS (
         DELETE FROM recording_chunks c USING recordings r WHERE c.blob_id = r.blob_id
       )
       DELETE FROM calls c USING settled s WHERE c.portal_id = s.portal_id AND c.call_id = s.call_id
       RETURNING c.call_id`,
      [before, limit],
    );
    // Clicks (click-to-call) older than the retention: matched long ago, or never dialled.
    await this.db.all(queueStatements.deleteOldClicks(POSTGRES_DIALECT, before, limit));
    return deleted.length;
  }

  async close(): Promise<void> {
    await this.db.close();
  }

  /** The call of `row`, its row version kept for updateCallsFrom. */
  private versioned(row: CallRow): CallRecord {
    const call = callOf(row);
    if (row.version) this.versions.set(call, row.version);
    return call;
  }

  private async lockCalls(
    client: PoolClient,
    portalId: string,
    sortedIds: string[],
  ): Promise<Map<string, CallRecord>> {
    const rows = await client.query<CallRow>(
      'SELECT call_id, data FROM calls WHERE portal_id = $1 AND call_id = ANY($2::text[]) ORDER BY call_id FOR UPDATE',
      [portalId, sortedIds],
    );
    return new Map(rows.rows.map((row) => [row.call_id, callOf(row)]));
  }
}
