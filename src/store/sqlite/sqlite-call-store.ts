import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { CallEvent, CallRecord, CallState, idempotencyKey } from '../../calls/call';
import { deliveryPriority } from '../../calls/call-lifecycle';
import { awaitingCallback } from '../../calls/missed-call-task';
import {
  AnsweredCall,
  CallMutator,
  CallStore,
  EventApplier,
  IngestResult,
  QueueStats,
  RecordingContent,
  RecordingQuotaError,
  StagedRecording,
  deepestQueuesOf,
  DueWorkOf,
  rechunk,
} from '../call-store';
import { ClickLedger, ClickRow, clickKeysOf } from '../../calls/click-ledger';
import { assertLeaseHeld, DeliveryLease } from '../coordination-store';
import { Fence } from '../fence';
import { SQLITE_DIALECT, SqliteDatabase } from './sqlite-database';

interface CallRow {
  data: string;
}

interface ClickDbRow {
  portal_call_id: string;
  user_id: number | null;
  phone_number: string | null;
  clicked_at: number | null;
  matched_call_id: string | null;
}

function clickOf(row: ClickDbRow): ClickRow {
  return {
    portalCallId: row.portal_call_id,
    userId: row.user_id ?? undefined,
    phoneNumber: row.phone_number ?? undefined,
    clickedAt: row.clicked_at ?? undefined,
    matchedCallId: row.matched_call_id ?? undefined,
  };
}

/**
 * The embedded store: one SQLite file in WAL mode with synchronous=FULL, so a commit is on disk before
 * the PBX hears 202. better-sqlite3 is synchronous, so each transaction is atomic within the process too.
 */
export class SqliteCallStore extends CallStore {
  private readonly db: Database.Database;
  private readonly statements: ReturnType<SqliteCallStore['prepare']>;

  /** The connection is shared with the token store (`SqliteDatabase` opens and migrates it once). */
  constructor(private readonly database: SqliteDatabase) {
    super();
    this.db = database.connection;
    this.statements = this.prepare();
  }

  private prepare() {
    return {
      insertEvent: this.db.prepare(
        'INSERT OR IGNORE INTO call_events (portal_id, call_id, event, payload, received_at) VALUES (?, ?, ?, ?, ?)',
      ),
      findCall: this.db.prepare('SELECT data FROM calls WHERE portal_id = ? AND call_id = ?'),
      upsertCall: this.db.prepare(
        `INSERT INTO calls (portal_id, call_id, state, next_step, due_at, created_at, updated_at, data, priority,
           callback_phone, callback_until)
         VALUES (@portalId, @callId, @state, @nextStep, @dueAt, @createdAt, @updatedAt, @data, @priority,
           @callbackPhone, @callbackUntil)
         ON CONFLICT (portal_id, call_id) DO UPDATE SET state = excluded.state, next_step = excluded.next_step,
           due_at = excluded.due_at, updated_at = excluded.updated_at, data = excluded.data,
           priority = excluded.priority, callback_phone = excluded.callback_phone,
           callback_until = excluded.callback_until`,
      ),
      dueCalls: this.db.prepare(
        'SELECT call_id, data FROM calls WHERE portal_id = ? AND due_at IS NOT NULL AND due_at <= ? ORDER BY priority, due_at LIMIT ?',
      ),
      dueCallsExcept: this.db.prepare(
        `SELECT call_id, data FROM calls WHERE portal_id = ? AND due_at IS NOT NULL AND due_at <= ?
           AND (next_step IS NULL OR next_step NOT IN (SELECT value FROM json_each(?)))
         ORDER BY priority, due_at LIMIT ?`,
      ),
      dueWork: this.db.prepare(
        `SELECT portal_id, 'call' AS kind FROM calls WHERE due_at IS NOT NULL AND due_at <= ?
         UNION SELECT portal_id, 'dial' FROM dial_requests
           WHERE state IN ('pending', 'sending') AND due_at <= ${SQLITE_DIALECT.nowMs}
         UNION SELECT portal_id, 'event' FROM portal_events WHERE state = 'pending' AND due_at <= ${SQLITE_DIALECT.nowMs}
         LIMIT ?`,
      ),
      nextDueAt: this.db.prepare(
        'SELECT MIN(due_at) AS due FROM calls WHERE portal_id = ? AND due_at IS NOT NULL',
      ),
      listCalls: this.db.prepare(
        'SELECT data FROM calls WHERE portal_id = ? AND state = ? ORDER BY updated_at DESC LIMIT ?',
      ),
      queueStats: this.db.prepare(
        `SELECT COUNT(*) AS depth, MIN(created_at) AS oldest FROM calls WHERE portal_id = ? AND due_at IS NOT NULL`,
      ),
      failedCount: this.db.prepare(
        `SELECT COUNT(*) AS failed FROM calls WHERE portal_id = ? AND state = 'failed'`,
      ),
      settledCalls: this.db.prepare(
        `SELECT portal_id, call_id FROM calls
         WHERE due_at IS NULL AND state IN ('finished', 'failed') AND updated_at < ? ORDER BY updated_at LIMIT ?`,
      ),
      deleteEvents: this.db.prepare('DELETE FROM call_events WHERE portal_id = ? AND call_id = ?'),
      deleteCall: this.db.prepare('DELETE FROM calls WHERE portal_id = ? AND call_id = ?'),
      deleteOldClicks: this.db.prepare(
        `DELETE FROM clicks WHERE (portal_id, portal_call_id) IN
           (SELECT portal_id, portal_call_id FROM clicks WHERE created_at < ? LIMIT ?)`,
      ),
      putRecording: this.db.prepare(
        `INSERT INTO recordings (portal_id, call_id, bytes, stored_at, content, blob_id) VALUES (?, ?, ?, ?, x'', ?)
         ON CONFLICT (portal_id, call_id) DO UPDATE SET bytes = excluded.bytes, stored_at = excluded.stored_at,
           content = excluded.content, blob_id = excluded.blob_id`,
      ),
      recordingRow: this.db.prepare(
        'SELECT bytes, blob_id FROM recordings WHERE portal_id = ? AND call_id = ?',
      ),
      inlineRecording: this.db.prepare('SELECT content FROM recordings WHERE portal_id = ? AND call_id = ?'),
      recordingBytes: this.db.prepare(
        'SELECT COALESCE(SUM(bytes), 0) AS bytes FROM recordings WHERE portal_id = ? AND call_id <> ?',
      ),
      insertChunk: this.db.prepare(
        'INSERT INTO recording_chunks (blob_id, seq, portal_id, created_at, content) VALUES (?, ?, ?, ?, ?)',
      ),
      readChunk: this.db.prepare('SELECT content FROM recording_chunks WHERE blob_id = ? AND seq = ?'),
      deleteChunks: this.db.prepare('DELETE FROM recording_chunks WHERE blob_id = ?'),
      deleteRecordingChunks: this.db.prepare(
        `DELETE FROM recording_chunks WHERE blob_id IN
           (SELECT blob_id FROM recordings WHERE portal_id = ? AND call_id = ? AND (? IS NULL OR stored_at = ?))`,
      ),
      deleteRecording: this.db.prepare(
        'DELETE FROM recordings WHERE portal_id = ? AND call_id = ? AND (? IS NULL OR stored_at = ?)',
      ),
      staleRecordings: this.db.prepare(
        'SELECT portal_id, call_id FROM recordings WHERE stored_at < ? ORDER BY stored_at LIMIT ?',
      ),
      orphanChunks: this.db.prepare(
        `DELETE FROM recording_chunks WHERE rowid IN (SELECT c.rowid FROM recording_chunks c
           WHERE c.created_at < ? AND NOT EXISTS (SELECT 1 FROM recordings r WHERE r.blob_id = c.blob_id) LIMIT ?)`,
      ),
      awaitingCallback: this.db.prepare(
        'SELECT call_id FROM calls WHERE portal_id = ? AND callback_phone = ? AND callback_until > ?',
      ),
      saveClick: this.db.prepare(
        `INSERT INTO clicks (portal_id, portal_call_id, user_id, phone_number, clicked_at, created_at)
         VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (portal_id, portal_call_id) DO UPDATE SET user_id = excluded.user_id,
           phone_number = excluded.phone_number, clicked_at = excluded.clicked_at
         WHERE clicks.clicked_at IS NULL`,
      ),
      claimClick: this.db.prepare(
        `INSERT INTO clicks (portal_id, portal_call_id, matched_call_id, created_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (portal_id, portal_call_id) DO UPDATE SET matched_call_id = excluded.matched_call_id`,
      ),
      clicksFor: this.db.prepare(
        `SELECT portal_call_id, user_id, phone_number, clicked_at, matched_call_id FROM clicks
         WHERE portal_id = ? AND (portal_call_id IN (SELECT value FROM json_each(?))
           OR (matched_call_id IS NULL AND phone_number IN (SELECT value FROM json_each(?))))`,
      ),
      findClick: this.db.prepare(
        `SELECT portal_call_id, user_id, phone_number, clicked_at, matched_call_id FROM clicks
         WHERE portal_id = ? AND portal_call_id = ?`,
      ),
      probe: this.db.prepare('INSERT OR REPLACE INTO probe (id, at) VALUES (1, ?)'),
      leaseHolder: this.db.prepare('SELECT owner, epoch FROM portal_leases WHERE portal_id = ?'),
    };
  }

  /**
   * The whole group of submissions in one transaction, synced off the main thread
   * (`SqliteDatabase.transactionSynced`): resolves once it is on disk.
   */
  async ingest(portalId: string, submissions: CallEvent[][], apply: EventApplier): Promise<IngestResult[]> {
    const now = Date.now();
    return this.database.transactionSynced(() => {
      const keys = clickKeysOf(submissions.flat());
      const rows = this.statements.clicksFor.all(
        portalId,
        JSON.stringify(keys.portalCallIds),
        JSON.stringify(keys.phones),
      ) as ClickDbRow[];
      const clicks = new ClickLedger(rows.map(clickOf));
      const results = submissions.map((events) => {
        const result: IngestResult = { accepted: 0, duplicates: 0 };
        for (const event of events) {
          // The key may depend on the call as stored (a later call.started naming new phones).
          const call = this.read(portalId, event.callId);
          const inserted = this.statements.insertEvent.run(
            portalId,
            event.callId,
            idempotencyKey(event, call),
            JSON.stringify(event),
            now,
          );
          if (inserted.changes === 0) {
            result.duplicates += 1;
            continue;
          }
          result.accepted += 1;
          this.save(apply(call, event, clicks));
        }
        return result;
      });
      for (const claimed of clicks.changed) {
        this.statements.claimClick.run(portalId, claimed.portalCallId, claimed.matchedCallId, now);
      }
      return results;
    });
  }

  async saveClick(portalId: string, click: ClickRow): Promise<void> {
    this.statements.saveClick.run(
      portalId,
      click.portalCallId,
      click.userId ?? null,
      click.phoneNumber ?? null,
      click.clickedAt ?? null,
      Date.now(),
    );
  }

  async findClick(portalId: string, portalCallId: string): Promise<ClickRow | undefined> {
    const row = this.statements.findClick.get(portalId, portalCallId) as ClickDbRow | undefined;
    return row && clickOf(row);
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
    const rows = (
      exceptSteps.length > 0
        ? this.statements.dueCallsExcept.all(portalId, now, JSON.stringify(exceptSteps), limit + skip.size)
        : this.statements.dueCalls.all(portalId, now, limit + skip.size)
    ) as (CallRow & { call_id: string })[];
    return rows
      .filter((row) => !skip.has(row.call_id))
      .slice(0, limit)
      .map((row) => JSON.parse(row.data) as CallRecord);
  }

  async updateCalls(
    portalId: string,
    callIds: string[],
    mutate: CallMutator,
    fence?: DeliveryLease,
  ): Promise<CallRecord[]> {
    return this.db
      .transaction(() => {
        if (fence) this.checkFence(portalId, fence);
        return callIds.flatMap((callId) => {
          const call = this.read(portalId, callId);
          if (!call) return [];
          const next = mutate(call);
          this.save(next);
          return [next];
        });
      })
      .immediate();
  }

  async stageRecording(portalId: string, source: AsyncIterable<Buffer>): Promise<StagedRecording> {
    const staged = { blobId: randomUUID(), bytes: 0 };
    let seq = 0;
    try {
      for await (const chunk of rechunk(source)) {
        // One chunk per statement: the loop is blocked for one chunk's write, never a whole file's.
        this.statements.insertChunk.run(staged.blobId, seq, portalId, Date.now(), chunk);
        seq += 1;
        staged.bytes += chunk.length;
      }
    } catch (error) {
      this.statements.deleteChunks.run(staged.blobId);
      throw error;
    }
    return staged;
  }

  async discardStagedRecording(_portalId: string, staged: StagedRecording): Promise<void> {
    this.statements.deleteChunks.run(staged.blobId);
  }

  async putRecording(
    portalId: string,
    callId: string,
    staged: StagedRecording,
    mutate: CallMutator,
    fence?: DeliveryLease,
    quotaBytes?: number,
  ): Promise<CallRecord | undefined> {
    return this.db
      .transaction(() => {
        if (fence) this.checkFence(portalId, fence);
        const call = this.read(portalId, callId);
        if (!call) return undefined;
        if (quotaBytes !== undefined) {
          const held = this.statements.recordingBytes.get(portalId, callId) as { bytes: number };
          if (held.bytes + staged.bytes > quotaBytes) throw new RecordingQuotaError(quotaBytes);
        }
        const next = mutate(call);
        const storedAt = next.recording?.storedAt ?? Date.now();
        this.statements.deleteRecordingChunks.run(portalId, callId, null, null);
        this.statements.putRecording.run(portalId, callId, staged.bytes, storedAt, staged.blobId);
        this.save(next);
        return next;
      })
      .immediate();
  }

  async updateCallsAwaitingCallback(
    portalId: string,
    answered: readonly AnsweredCall[],
    mutate: CallMutator,
  ): Promise<CallRecord[]> {
    return this.db
      .transaction(() => {
        const callIds = new Set<string>();
        for (const { phone, answeredAt } of answered) {
          const rows = this.statements.awaitingCallback.all(portalId, phone, answeredAt) as {
            call_id: string;
          }[];
          for (const row of rows) callIds.add(row.call_id);
        }
        return [...callIds].flatMap((callId) => {
          const call = this.read(portalId, callId);
          if (!call) return [];
          const next = mutate(call);
          if (next !== call) this.save(next);
          return [next];
        });
      })
      .immediate();
  }

  async readRecording(portalId: string, callId: string): Promise<RecordingContent | undefined> {
    const row = this.statements.recordingRow.get(portalId, callId) as
      { bytes: number; blob_id: string | null } | undefined;
    if (!row) return undefined;
    const { inlineRecording, readChunk } = this.statements;
    const blobId = row.blob_id;
    async function* chunks(): AsyncIterable<Buffer> {
      if (blobId === null) {
        // Stored before recordings were chunked: one read, as then.
        const inline = inlineRecording.get(portalId, callId) as { content: Buffer } | undefined;
        if (inline) yield inline.content;
        return;
      }
      for (let seq = 0; ; seq += 1) {
        const chunk = readChunk.get(blobId, seq) as { content: Buffer } | undefined;
        if (!chunk) return;
        yield chunk.content;
        // The loop gets a turn between two chunks.
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    return { bytes: row.bytes, chunks: chunks() };
  }

  async recordingBytes(portalId: string): Promise<number> {
    return (this.statements.recordingBytes.get(portalId, '') as { bytes: number }).bytes;
  }

  async deleteRecording(portalId: string, callId: string, storedAt?: number): Promise<void> {
    const at = storedAt ?? null;
    this.db.transaction(() => {
      this.statements.deleteRecordingChunks.run(portalId, callId, at, at);
      this.statements.deleteRecording.run(portalId, callId, at, at);
    })();
  }

  async expireRecordings(storedBefore: number, orphanedBefore: number, limit: number): Promise<number> {
    return this.db
      .transaction(() => {
        const stale = this.statements.staleRecordings.all(storedBefore, limit) as {
          portal_id: string;
          call_id: string;
        }[];
        for (const { portal_id: portalId, call_id: callId } of stale) {
          this.statements.deleteRecordingChunks.run(portalId, callId, null, null);
          this.statements.deleteRecording.run(portalId, callId, null, null);
        }
        this.statements.orphanChunks.run(orphanedBefore, limit);
        return stale.length;
      })
      .immediate();
  }

  private checkFence(portalId: string, fence: DeliveryLease): void {
    assertLeaseHeld(this.statements.leaseHolder.get(portalId) as Fence | undefined, fence);
  }

  async listCalls(portalId: string, state: CallState, limit: number): Promise<CallRecord[]> {
    return (this.statements.listCalls.all(portalId, state, limit) as CallRow[]).map(
      (row) => JSON.parse(row.data) as CallRecord,
    );
  }

  async nextDueAt(portalId: string): Promise<number | undefined> {
    const row = this.statements.nextDueAt.get(portalId) as { due: number | null };
    return row.due ?? undefined;
  }

  async portalsWithDueWork(now: number, limit: number): Promise<DueWorkOf[]> {
    const rows = this.statements.dueWork.all(now, limit) as { portal_id: string; kind: DueWorkOf['kind'] }[];
    return rows.map((row) => ({ portalId: row.portal_id, kind: row.kind }));
  }

  async deepestQueues(
    limit: number,
  ): Promise<{ total: QueueStats; top: (QueueStats & { portalId: string })[] }> {
    const total = this.db
      .prepare('SELECT COUNT(*) AS depth, MIN(created_at) AS oldest FROM calls WHERE due_at IS NOT NULL')
      .get() as { depth: number; oldest: number | null };
    // Readiness asks for the top portals; the gauges only for the total.
    const top =
      limit === 0
        ? []
        : (this.db
            .prepare(
              `SELECT portal_id, COUNT(*) AS depth, MIN(created_at) AS oldest FROM calls WHERE due_at IS NOT NULL
         GROUP BY portal_id ORDER BY depth DESC, portal_id LIMIT ?`,
            )
            .all(limit) as { portal_id: string; depth: number; oldest: number | null }[]);
    return deepestQueuesOf(total, top);
  }

  async queueStats(portalId: string): Promise<QueueStats> {
    const row = this.statements.queueStats.get(portalId) as { depth: number; oldest: number | null };
    const failed = this.statements.failedCount.get(portalId) as { failed: number };
    return { depth: row.depth, oldestCreatedAt: row.oldest ?? undefined, failed: failed.failed };
  }

  async deleteSettledCalls(before: number, limit: number): Promise<number> {
    return this.db
      .transaction(() => {
        const settled = this.statements.settledCalls.all(before, limit) as {
          portal_id: string;
          call_id: string;
        }[];
        for (const { portal_id: portalId, call_id: callId } of settled) {
          this.statements.deleteEvents.run(portalId, callId);
          this.statements.deleteRecordingChunks.run(portalId, callId, null, null);
          this.statements.deleteRecording.run(portalId, callId, null, null);
          this.statements.deleteCall.run(portalId, callId);
        }
        // Clicks (click-to-call) older than the retention: matched long ago, or never dialled.
        this.statements.deleteOldClicks.run(before, limit);
        return settled.length;
      })
      .immediate();
  }

  async checkWritable(): Promise<void> {
    this.statements.probe.run(Date.now());
  }

  /** One process owns a SQLite file: nobody else stores work it must hear of. */
  watchNewWork(): () => void {
    return () => undefined;
  }

  async close(): Promise<void> {
    this.database.close();
  }

  private read(portalId: string, callId: string): CallRecord | undefined {
    const row = this.statements.findCall.get(portalId, callId) as CallRow | undefined;
    return row ? (JSON.parse(row.data) as CallRecord) : undefined;
  }

  private save(call: CallRecord): void {
    this.statements.upsertCall.run({
      portalId: call.portalId,
      callId: call.callId,
      state: call.state,
      nextStep: call.nextStep ?? null,
      dueAt: call.dueAt ?? null,
      createdAt: call.createdAt,
      updatedAt: call.updatedAt,
      data: JSON.stringify(call),
      priority: deliveryPriority(call),
      callbackPhone: awaitingCallback(call)?.phone ?? null,
      callbackUntil: awaitingCallback(call)?.until ?? null,
    });
  }
}
