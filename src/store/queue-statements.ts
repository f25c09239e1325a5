import { CallState } from '../calls/call';
import { ClickRow } from '../calls/click-ledger';
import { CLICK_COLUMNS } from './call-rows';
import { sql, SqlDialect, Statement } from './fence';

/**
 * The call store's single statements, defined once for both engines (`SqlDialect`): reads of the queue,
 * clicks, recording chunks and the probe. What needs a transaction of several statements with the
 * engine's own locking (intake, fenced writes, putting and expiring recordings) stays with each engine.
 */
export const queueStatements = {
  findCall: (d: SqlDialect, portalId: string, callId: string): Statement =>
    sql(
      d,
      (q) =>
        `SELECT call_id, data FROM calls WHERE portal_id = ${q.value(portalId)} AND call_id = ${q.value(callId)}`,
    ),

  listCalls: (d: SqlDialect, portalId: string, state: CallState, limit: number): Statement =>
    sql(
      d,
      (
        q,
      ) => `SELECT call_id, data FROM calls WHERE portal_id = ${q.value(portalId)} AND state = ${q.value(state)}
        ORDER BY updated_at DESC LIMIT ${q.value(limit)}`,
    ),

  nextDueAt: (d: SqlDialect, portalId: string): Statement =>
    sql(
      d,
      (q) =>
        `SELECT MIN(due_at) AS due FROM calls WHERE portal_id = ${q.value(portalId)} AND due_at IS NOT NULL`,
    ),

  /** Each parameter placed once where it is used (SQLite's placeholders are positional). */
  queueStats: (d: SqlDialect, portalId: string): Statement =>
    sql(
      d,
      (
        q,
      ) => `SELECT (SELECT COUNT(*) FROM calls WHERE portal_id = ${q.value(portalId)} AND due_at IS NOT NULL) AS depth,
        (SELECT MIN(created_at) FROM calls WHERE portal_id = ${q.value(portalId)} AND due_at IS NOT NULL) AS oldest,
        (SELECT COUNT(*) FROM calls WHERE portal_id = ${q.value(portalId)} AND state = 'failed') AS failed`,
    ),

  queueTotal: (d: SqlDialect): Statement =>
    sql(d, () => 'SELECT COUNT(*) AS depth, MIN(created_at) AS oldest FROM calls WHERE due_at IS NOT NULL'),

  deepestQueues: (d: SqlDialect, limit: number): Statement =>
    sql(
      d,
      (
        q,
      ) => `SELECT portal_id, COUNT(*) AS depth, MIN(created_at) AS oldest FROM calls WHERE due_at IS NOT NULL
        GROUP BY portal_id ORDER BY depth DESC, portal_id LIMIT ${q.value(limit)}`,
    ),

  /** Calls due on this process's clock (as `dueCalls`); dial requests and portal events on the database's. */
  portalsWithDueWork: (d: SqlDialect, now: number, limit: number): Statement =>
    sql(
      d,
      (
        q,
      ) => `SELECT portal_id, 'call' AS kind FROM calls WHERE due_at IS NOT NULL AND due_at <= ${q.value(now)}
        UNION SELECT portal_id, 'dial' FROM dial_requests WHERE state IN ('pending', 'sending') AND due_at <= ${q.now}
        UNION SELECT portal_id, 'event' FROM portal_events WHERE state = 'pending' AND due_at <= ${q.now}
        LIMIT ${q.value(limit)}`,
    ),

  /** Idempotent by CALL_ID; a row a `crmCallId` made before the click arrived gets the click's details. */
  saveClick: (d: SqlDialect, portalId: string, click: ClickRow, now: number): Statement =>
    sql(
      d,
      (q) => `INSERT INTO clicks (portal_id, portal_call_id, user_id, phone_number, clicked_at, created_at)
        VALUES (${q.value(portalId)}, ${q.value(click.portalCallId)}, ${q.value(click.userId)},
          ${q.value(click.phoneNumber)}, ${q.value(click.clickedAt)}, ${q.value(now)})
        ON CONFLICT (portal_id, portal_call_id) DO UPDATE SET user_id = excluded.user_id,
          phone_number = excluded.phone_number, clicked_at = excluded.clicked_at
        WHERE clicks.clicked_at IS NULL`,
    ),

  findClick: (d: SqlDialect, portalId: string, portalCallId: string): Statement =>
    sql(
      d,
      (q) =>
        `SELECT ${CLICK_COLUMNS} FROM clicks WHERE portal_id = ${q.value(portalId)} AND portal_call_id = ${q.value(portalCallId)}`,
    ),

  /** Retention: clicks older than it, matched long ago or never dialled. */
  deleteOldClicks: (d: SqlDialect, before: number, limit: number): Statement =>
    sql(
      d,
      (q) => `DELETE FROM clicks WHERE (portal_id, portal_call_id) IN
        (SELECT portal_id, portal_call_id FROM clicks WHERE created_at < ${q.value(before)} LIMIT ${q.value(limit)})`,
    ),

  recording: (d: SqlDialect, portalId: string, callId: string): Statement =>
    sql(
      d,
      (q) =>
        `SELECT bytes, blob_id FROM recordings WHERE portal_id = ${q.value(portalId)} AND call_id = ${q.value(callId)}`,
    ),

  /** Stored before recordings were chunked: the content in the recording's row. */
  inlineRecording: (d: SqlDialect, portalId: string, callId: string): Statement =>
    sql(
      d,
      (q) =>
        `SELECT content FROM recordings WHERE portal_id = ${q.value(portalId)} AND call_id = ${q.value(callId)}`,
    ),

  chunk: (d: SqlDialect, blobId: string, seq: number): Statement =>
    sql(
      d,
      (q) =>
        `SELECT content FROM recording_chunks WHERE blob_id = ${q.value(blobId)} AND seq = ${q.value(seq)}`,
    ),

  insertChunk: (
    d: SqlDialect,
    chunk: { blobId: string; seq: number; portalId: string; content: Buffer },
  ): Statement =>
    sql(
      d,
      (q) => `INSERT INTO recording_chunks (blob_id, seq, portal_id, created_at, content)
        VALUES (${q.value(chunk.blobId)}, ${q.value(chunk.seq)}, ${q.value(chunk.portalId)}, ${q.value(Date.now())},
          ${q.value(chunk.content)})`,
    ),

  deleteChunks: (d: SqlDialect, blobId: string): Statement =>
    sql(d, (q) => `DELETE FROM recording_chunks WHERE blob_id = ${q.value(blobId)}`),

  /** The portal's held recording bytes, less those of `exceptCallId` (the one a push replaces). */
  recordingBytes: (d: SqlDialect, portalId: string, exceptCallId = ''): Statement =>
    sql(
      d,
      (q) => `SELECT CAST(COALESCE(SUM(bytes), 0) AS BIGINT) AS bytes FROM recordings
        WHERE portal_id = ${q.value(portalId)} AND call_id <> ${q.value(exceptCallId)}`,
    ),

  /** Staged chunks no recording took, written before `before` (a push cut off by a crash). */
  deleteOrphanChunks: (d: SqlDialect, before: number, limit: number): Statement =>
    sql(
      d,
      (q) => `DELETE FROM recording_chunks WHERE (blob_id, seq) IN (
        SELECT c.blob_id, c.seq FROM recording_chunks c
        WHERE c.created_at < ${q.value(before)} AND NOT EXISTS (SELECT 1 FROM recordings r WHERE r.blob_id = c.blob_id)
        LIMIT ${q.value(limit)})`,
    ),

  probe: (d: SqlDialect, now: number): Statement =>
    sql(
      d,
      (q) =>
        `INSERT INTO probe (id, at) VALUES (1, ${q.value(now)}) ON CONFLICT (id) DO UPDATE SET at = excluded.at`,
    ),
};
