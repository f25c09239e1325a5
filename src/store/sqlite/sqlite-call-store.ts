import { CallEvent, CallRecord } from '../../calls/call';
import { ClickLedger, clickKeysOf } from '../../calls/click-ledger';
import {
  callColumnsOf,
  callOf,
  CLICK_COLUMNS,
  ClickDbRow,
  clickOf,
  eventKey,
  ON_CALL_CONFLICT,
  takeEvents,
  UPSERT_CALL_COLUMNS,
} from '../call-rows';
import {
  AnsweredCall,
  CallMutator,
  EventApplier,
  IngestResult,
  PutRecording,
  RecordingQuotaError,
} from '../call-store';
import { assertLeaseHeld, DeliveryLease } from '../coordination-store';
import { Fence, raw, sqlOf, Statement, StatementBuilder } from '../fence';
import { queueStatements } from '../queue-statements';
import { SqlCallStore } from '../sql-call-store';
import { SQLITE_DIALECT as D, SqliteDatabase } from './sqlite-database';

const sqlite = sqlOf(D);

/**
 * The embedded store: one SQLite file in WAL mode with synchronous=FULL, so a commit is on disk before
 * the PBX hears 202. better-sqlite3 is synchronous, so each transaction is atomic within the process too:
 * a transaction's body runs its statements at once (`runNow`), never waiting in between.
 */
export class SqliteCallStore extends SqlCallStore {
  /** The connection is shared with the other stores (`SqliteDatabase` opens and migrates it once). */
  constructor(private readonly database: SqliteDatabase) {
    super(database);
  }

  /**
   * The whole group of submissions in one transaction, synced off the main thread
   * (`SqliteDatabase.transactionSynced`): resolves once it is on disk.
   */
  async ingest(portalId: string, submissions: CallEvent[][], apply: EventApplier): Promise<IngestResult[]> {
    const now = Date.now();
    return this.database.transactionSynced(() => {
      const events = submissions.flat();
      const callIds = JSON.stringify([...new Set(events.map((event) => event.callId))]);
      const keys = clickKeysOf(events);
      const known = new Set(
        this.rows<{ call_id: string; event: string }>(
          sqlite`SELECT call_id, event FROM call_events
              WHERE portal_id = ${portalId} AND call_id IN (SELECT value FROM json_each(${callIds}))`,
        ).map((row) => eventKey(row.call_id, row.event)),
      );
      const calls = new Map(
        this.rows<{ call_id: string; data: string }>(
          sqlite`SELECT call_id, data FROM calls
              WHERE portal_id = ${portalId} AND call_id IN (SELECT value FROM json_each(${callIds}))`,
        ).map((row) => [row.call_id, callOf(row)]),
      );
      const clicks = new ClickLedger(
        this.rows<ClickDbRow>(
          sqlite`SELECT ${raw(CLICK_COLUMNS)} FROM clicks WHERE portal_id = ${portalId}
              AND (portal_call_id IN (SELECT value FROM json_each(${JSON.stringify(keys.portalCallIds)}))
                OR (matched_call_id IS NULL
                  AND phone_number IN (SELECT value FROM json_each(${JSON.stringify(keys.phones)}))))`,
        ).map(clickOf),
      );
      const outcome = takeEvents(submissions, apply, { known, calls, clicks });
      for (const { event, key } of outcome.fresh) {
        this.rows(
          sqlite`INSERT INTO call_events (portal_id, call_id, event, payload, received_at)
              VALUES (${portalId}, ${event.callId}, ${key},
                ${JSON.stringify(event)}, ${now})`,
        );
      }
      for (const call of outcome.changed) this.save(call);
      for (const claimed of clicks.changed) {
        this.rows(
          sqlite`INSERT INTO clicks (portal_id, portal_call_id, matched_call_id, created_at)
              VALUES (${portalId}, ${claimed.portalCallId}, ${claimed.matchedCallId},
                ${now})
              ON CONFLICT (portal_id, portal_call_id) DO UPDATE SET matched_call_id = excluded.matched_call_id`,
        );
      }
      return outcome.results;
    });
  }

  async dueCalls(
    portalId: string,
    now: number,
    limit: number,
    skip: ReadonlySet<string>,
    exceptSteps: readonly string[] = [],
  ): Promise<CallRecord[]> {
    const rows = this.rows<{ call_id: string; data: string }>(
      sqlite`SELECT call_id, data FROM calls
          WHERE portal_id = ${portalId} AND due_at IS NOT NULL AND due_at <= ${now}
            AND (next_step IS NULL OR next_step NOT IN (SELECT value FROM json_each(${JSON.stringify(exceptSteps)})))
          ORDER BY priority, due_at LIMIT ${limit + skip.size}`,
    );
    return rows
      .filter((row) => !skip.has(row.call_id))
      .slice(0, limit)
      .map(callOf);
  }

  async updateCalls(
    portalId: string,
    callIds: string[],
    mutate: CallMutator,
    fence?: DeliveryLease,
  ): Promise<CallRecord[]> {
    return this.database.connection
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

  async putRecording(put: PutRecording): Promise<CallRecord | undefined> {
    const { portalId, callId, staged } = put;
    return this.database.connection
      .transaction(() => {
        if (put.fence) this.checkFence(portalId, put.fence);
        const call = this.read(portalId, callId);
        if (!call) return undefined;
        if (put.quotaBytes !== undefined) {
          const [held] = this.rows<{ bytes: number }>(queueStatements.recordingBytes(D, portalId, callId));
          if (held.bytes + staged.bytes > put.quotaBytes) throw new RecordingQuotaError(put.quotaBytes);
        }
        const next = put.mutate(call);
        this.forgetRecording(portalId, callId);
        this.rows(
          sqlite`INSERT INTO recordings (portal_id, call_id, bytes, stored_at, content, blob_id)
              VALUES (${portalId}, ${callId}, ${staged.bytes},
                ${next.recording.file?.storedAt ?? Date.now()}, x'', ${staged.blobId})`,
        );
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
    return this.database.connection
      .transaction(() => {
        const callIds = new Set<string>();
        for (const { phone, answeredAt } of answered) {
          const rows = this.rows<{ call_id: string }>(
            sqlite`SELECT call_id FROM calls WHERE portal_id = ${portalId}
                AND callback_phone = ${phone} AND callback_until > ${answeredAt}`,
          );
          for (const row of rows) callIds.add(row.call_id);
        }
        return [...callIds].sort().flatMap((callId) => {
          const call = this.read(portalId, callId);
          if (!call) return [];
          const next = mutate(call);
          if (next !== call) this.save(next);
          return [next];
        });
      })
      .immediate();
  }

  async deleteRecording(portalId: string, callId: string, storedAt?: number): Promise<void> {
    this.database.connection.transaction(() => this.forgetRecording(portalId, callId, storedAt))();
  }

  async expireRecordings(storedBefore: number, orphanedBefore: number, limit: number): Promise<number> {
    return this.database.connection
      .transaction(() => {
        const stale = this.rows<{ portal_id: string; call_id: string }>(
          sqlite`SELECT portal_id, call_id FROM recordings WHERE stored_at < ${storedBefore}
              ORDER BY stored_at LIMIT ${limit}`,
        );
        for (const row of stale) this.forgetRecording(row.portal_id, row.call_id);
        this.rows(queueStatements.deleteOrphanChunks(D, orphanedBefore, limit));
        return stale.length;
      })
      .immediate();
  }

  async deleteSettledCalls(before: number, limit: number): Promise<number> {
    return this.database.connection
      .transaction(() => {
        const settled = this.rows<{ portal_id: string; call_id: string }>(
          sqlite`SELECT portal_id, call_id FROM calls
              WHERE due_at IS NULL AND state IN ('finished', 'failed', 'ignored') AND updated_at < ${before}
              ORDER BY updated_at LIMIT ${limit}`,
        );
        for (const { portal_id: portalId, call_id: callId } of settled) {
          const key = (table: string) =>
            sqlite`DELETE FROM ${raw(table)} WHERE portal_id = ${portalId} AND call_id = ${callId}`;
          this.rows(key('call_events'));
          this.forgetRecording(portalId, callId);
          this.rows(key('calls'));
        }
        this.rows(queueStatements.deleteOldClicks(D, before, limit));
        return settled.length;
      })
      .immediate();
  }

  /** One process owns a SQLite file: nobody else stores work it must hear of. */
  watchNewWork(): () => void {
    return () => undefined;
  }

  async close(): Promise<void> {
    this.database.close();
  }

  /** The recording and its chunks; with `storedAt`, only the content stored then. */
  private forgetRecording(portalId: string, callId: string, storedAt?: number): void {
    const which = (q: StatementBuilder) =>
      `portal_id = ${q.value(portalId)} AND call_id = ${q.value(callId)}
        AND (${q.value(storedAt)} IS NULL OR stored_at = ${q.value(storedAt)})`;
    this.rows(
      sqlite`DELETE FROM recording_chunks WHERE blob_id IN (SELECT blob_id FROM recordings WHERE ${which})`,
    );
    this.rows(sqlite`DELETE FROM recordings WHERE ${which}`);
  }

  private checkFence(portalId: string, fence: DeliveryLease): void {
    const [holder] = this.rows<Fence>(
      sqlite`SELECT owner, epoch FROM portal_leases WHERE portal_id = ${portalId}`,
    );
    assertLeaseHeld(holder, fence);
  }

  private read(portalId: string, callId: string): CallRecord | undefined {
    const [row] = this.rows<{ data: string }>(queueStatements.findCall(D, portalId, callId));
    return row && callOf(row);
  }

  private save(call: CallRecord): void {
    const columns = Object.values(callColumnsOf(call));
    const values = (q: StatementBuilder) => columns.map((value) => q.value(value)).join(', ');
    this.rows(
      sqlite`INSERT INTO calls ${raw(UPSERT_CALL_COLUMNS)} VALUES (${values}) ${raw(ON_CALL_CONFLICT)}`,
    );
  }

  private rows<R>(statement: Statement): R[] {
    return this.database.runNow<R>(statement);
  }
}
