import { CallState } from '../calls/call';
import { ClickRow } from '../calls/click-ledger';
import { CLICK_COLUMNS } from './call-rows';
import { NOW, raw, SqlDialect, sqlOf, Statement } from './fence';

/**
 * The call store's single statements, defined once for both engines (`SqlDialect`): reads of the queue,
 * clicks, recording chunks and the probe. What needs a transaction of several statements with the
 * engine's own locking (intake, fenced writes, putting and expiring recordings) stays with each engine.
 */
export const queueStatements = {
  findCall: (d: SqlDialect, portalId: string, callId: string): Statement =>
    sqlOf(d)`SELECT call_id, data FROM calls WHERE portal_id = ${portalId} AND call_id = ${callId}`,

  listCalls: (d: SqlDialect, portalId: string, state: CallState, limit: number): Statement =>
    sqlOf(d)`SELECT call_id, data FROM calls WHERE portal_id = ${portalId} AND state = ${state}
        ORDER BY updated_at DESC LIMIT ${limit}`,

  /** Calls created since `since` by their line (the flat row's `line`; null: a call without one). */
  callsByLine: (d: SqlDialect, portalId: string, since: number): Statement =>
    sqlOf(d)`SELECT ${raw(d.jsonText('data', 'line'))} AS line, COUNT(*) AS calls FROM calls
        WHERE portal_id = ${portalId} AND created_at >= ${since} GROUP BY ${raw(d.jsonText('data', 'line'))}
        ORDER BY calls DESC`,

  nextDueAt: (d: SqlDialect, portalId: string): Statement =>
    sqlOf(d)`SELECT MIN(due_at) AS due FROM calls WHERE portal_id = ${portalId} AND due_at IS NOT NULL`,

  /** Each parameter placed once where it is used (SQLite's placeholders are positional). */
  queueStats: (d: SqlDialect, portalId: string): Statement =>
    sqlOf(d)`SELECT (SELECT COUNT(*) FROM calls WHERE portal_id = ${portalId} AND due_at IS NOT NULL)
          AS depth,
        (SELECT MIN(created_at) FROM calls WHERE portal_id = ${portalId} AND due_at IS NOT NULL) AS oldest,
        (SELECT COUNT(*) FROM calls WHERE portal_id = ${portalId} AND state = 'failed') AS failed`,

  queueTotal: (d: SqlDialect): Statement =>
    sqlOf(d)`SELECT COUNT(*) AS depth, MIN(created_at) AS oldest FROM calls WHERE due_at IS NOT NULL`,

  deepestQueues: (d: SqlDialect, limit: number): Statement =>
    sqlOf(d)`SELECT portal_id, COUNT(*) AS depth, MIN(created_at) AS oldest FROM calls
        WHERE due_at IS NOT NULL
        GROUP BY portal_id ORDER BY depth DESC, portal_id LIMIT ${limit}`,

  /** Calls due on this process's clock (as `dueCalls`); dial requests and portal events on the database's. */
  portalsWithDueWork: (d: SqlDialect, now: number, limit: number): Statement =>
    sqlOf(d)`SELECT portal_id, 'call' AS kind FROM calls WHERE due_at IS NOT NULL AND due_at <= ${now}
        UNION SELECT portal_id, 'dial' FROM dial_requests WHERE state IN ('pending', 'sending') AND due_at <= ${NOW}
        UNION SELECT portal_id, 'event' FROM portal_events WHERE state = 'pending' AND due_at <= ${NOW}
        LIMIT ${limit}`,

  /** Idempotent by CALL_ID; a row a `crmCallId` made before the click arrived gets the click's details. */
  saveClick: (d: SqlDialect, portalId: string, click: ClickRow, now: number): Statement =>
    sqlOf(d)`INSERT INTO clicks (portal_id, portal_call_id, user_id, phone_number, clicked_at, created_at)
        VALUES (${portalId}, ${click.portalCallId}, ${click.userId},
          ${click.phoneNumber}, ${click.clickedAt}, ${now})
        ON CONFLICT (portal_id, portal_call_id) DO UPDATE SET user_id = excluded.user_id,
          phone_number = excluded.phone_number, clicked_at = excluded.clicked_at
        WHERE clicks.clicked_at IS NULL`,

  findClick: (d: SqlDialect, portalId: string, portalCallId: string): Statement =>
    sqlOf(d)`SELECT ${raw(CLICK_COLUMNS)} FROM clicks
        WHERE portal_id = ${portalId} AND portal_call_id = ${portalCallId}`,

  /** Retention: clicks older than it, matched long ago or never dialled. */
  deleteOldClicks: (d: SqlDialect, before: number, limit: number): Statement =>
    sqlOf(d)`DELETE FROM clicks WHERE (portal_id, portal_call_id) IN
        (SELECT portal_id, portal_call_id FROM clicks WHERE created_at < ${before} LIMIT ${limit})`,

  recording: (d: SqlDialect, portalId: string, callId: string): Statement =>
    sqlOf(d)`SELECT bytes, blob_id FROM recordings WHERE portal_id = ${portalId} AND call_id = ${callId}`,

  /** Stored before recordings were chunked: the content in the recording's row. */
  inlineRecording: (d: SqlDialect, portalId: string, callId: string): Statement =>
    sqlOf(d)`SELECT content FROM recordings WHERE portal_id = ${portalId} AND call_id = ${callId}`,

  chunk: (d: SqlDialect, blobId: string, seq: number): Statement =>
    sqlOf(d)`SELECT content FROM recording_chunks WHERE blob_id = ${blobId} AND seq = ${seq}`,

  insertChunk: (
    d: SqlDialect,
    chunk: { blobId: string; seq: number; portalId: string; content: Buffer },
  ): Statement =>
    sqlOf(d)`INSERT INTO recording_chunks (blob_id, seq, portal_id, created_at, content)
        VALUES (${chunk.blobId}, ${chunk.seq}, ${chunk.portalId}, ${Date.now()},
          ${chunk.content})`,

  deleteChunks: (d: SqlDialect, blobId: string): Statement =>
    sqlOf(d)`DELETE FROM recording_chunks WHERE blob_id = ${blobId}`,

  /** The portal's held recording bytes, less those of `exceptCallId` (the one a push replaces). */
  recordingBytes: (d: SqlDialect, portalId: string, exceptCallId = ''): Statement =>
    sqlOf(d)`SELECT CAST(COALESCE(SUM(bytes), 0) AS BIGINT) AS bytes FROM recordings
        WHERE portal_id = ${portalId} AND call_id <> ${exceptCallId}`,

  /** Staged chunks no recording took, written before `before` (a push cut off by a crash). */
  deleteOrphanChunks: (d: SqlDialect, before: number, limit: number): Statement =>
    sqlOf(d)`DELETE FROM recording_chunks WHERE (blob_id, seq) IN (
        SELECT c.blob_id, c.seq FROM recording_chunks c
        WHERE c.created_at < ${before} AND NOT EXISTS (SELECT 1 FROM recordings r WHERE r.blob_id = c.blob_id)
        LIMIT ${limit})`,

  probe: (d: SqlDialect, now: number): Statement =>
    sqlOf(d)`INSERT INTO probe (id, at) VALUES (1, ${now}) ON CONFLICT (id) DO UPDATE SET at = excluded.at`,
};
