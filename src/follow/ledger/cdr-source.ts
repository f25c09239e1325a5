import { createPool, Pool, PoolOptions, RowDataPacket } from 'mysql2/promise';
import { CdrRow } from './cdr-calls';

/** Rows per query at most: a busy window is read in pages, never in one unbounded result. */
export const PAGE_ROWS = 500;

/** Where a page starts: strictly after this row in (calldate, uniqueid, sequence) order. */
export interface PageCursor {
  calldate: string;
  uniqueid: string;
  sequence: number;
}

/** ASTERISK_CDR_URL parsed: the pool's options and a label without credentials for health and logs. */
export function cdrTargetOf(url: string): { options: PoolOptions; label: string } {
  const parsed = new URL(url);
  const ssl = parsed.searchParams.get('ssl');
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  const port = Number(parsed.port || 3306);
  const tls = ssl !== null && !/^(false|0|off|disabled?)$/i.test(ssl);
  return {
    options: {
      host: parsed.hostname,
      port,
      user: decodeURIComponent(parsed.username),
      password: decodeURIComponent(parsed.password),
      database,
      // A certificate is always checked; `?ssl=true` (or any value but false) turns TLS on.
      ...(tls ? { ssl: { rejectUnauthorized: true } } : {}),
    },
    label: `mysql://${parsed.hostname}:${port}/${database}${tls ? ' (tls)' : ''}`,
  };
}

/**
 * The CDR table over a pool of at most two connections (`mysql2`, which reconnects a dropped connection on
 * the next query). Times are read as the column's text (`dateStrings`), never shifted through a JavaScript
 * Date: the column is the PBX's local time without a zone.
 */
export class CdrSource {
  private readonly pool: Pool;

  constructor(options: PoolOptions, timeoutMs = 5000) {
    this.pool = createPool({
      ...options,
      connectionLimit: 2,
      maxIdle: 1,
      idleTimeout: 60_000,
      connectTimeout: timeoutMs,
      dateStrings: true,
      enableKeepAlive: true,
      queueLimit: 10,
    });
  }

  /**
   * One page of rows whose leg ended at or after `endedFrom`, started at or after `calldateFrom` (so the
   * calldate index bounds the scan), in (calldate, uniqueid, sequence) order, after `after`.
   */
  async page(
    calldateFrom: string,
    endedFrom: string,
    after?: PageCursor,
    limit = PAGE_ROWS,
  ): Promise<CdrRow[]> {
    const cursor = after
      ? 'AND (calldate > ? OR (calldate = ? AND (uniqueid > ? OR (uniqueid = ? AND COALESCE(sequence, -1) > ?))))'
      : '';
    const params: unknown[] = [calldateFrom, endedFrom];
    if (after) params.push(after.calldate, after.calldate, after.uniqueid, after.uniqueid, after.sequence);
    params.push(limit);
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT ${COLUMNS}
         FROM cdr
        WHERE calldate >= ? AND calldate + INTERVAL duration SECOND >= ? ${cursor}
        ORDER BY calldate, uniqueid, COALESCE(sequence, -1)
        LIMIT ?`,
      params,
    );
    return rows.map(rowOf);
  }

  /**
   * Every row of one call (the `linkedid` index FreePBX's cdr module adds), started at or after
   * `calldateFrom`: the segments its Party As wrote long before its last one, whatever the window read.
   */
  async callRows(linkedid: string, calldateFrom: string): Promise<CdrRow[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT ${COLUMNS} FROM cdr WHERE linkedid = ? AND calldate >= ? ORDER BY calldate LIMIT ?`,
      [linkedid, calldateFrom, PAGE_ROWS],
    );
    return rows.map(rowOf);
  }

  /** The newest row start, on the PBX's clock (the `calldate` index): where a first start reads from. */
  async newestCalldate(): Promise<string | undefined> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT DATE_FORMAT(MAX(calldate), '%Y-%m-%d %H:%i:%s') AS newest FROM cdr`,
    );
    return rows[0]?.newest ? String(rows[0].newest) : undefined;
  }

  /** Logs in and reads the `cdr` table once (no row needed): what the application page's "test connection" asks. */
  async check(): Promise<void> {
    await this.pool.query('SELECT 1 FROM cdr LIMIT 1');
  }

  async close(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }
}

const COLUMNS = `DATE_FORMAT(calldate, '%Y-%m-%d %H:%i:%s') AS calldate,
       DATE_FORMAT(calldate + INTERVAL duration SECOND, '%Y-%m-%d %H:%i:%s') AS ended,
       src, dst, channel, dstchannel, lastapp, duration, billsec, disposition, uniqueid, did,
       recordingfile, cnum, linkedid, sequence`;

const rowOf = (row: RowDataPacket): CdrRow => ({
  calldate: String(row.calldate),
  ended: String(row.ended),
  src: text(row.src),
  dst: text(row.dst),
  channel: text(row.channel),
  dstchannel: text(row.dstchannel),
  lastapp: text(row.lastapp),
  duration: Number(row.duration) || 0,
  billsec: Number(row.billsec) || 0,
  disposition: text(row.disposition).toUpperCase(),
  uniqueid: text(row.uniqueid),
  did: text(row.did),
  recordingfile: text(row.recordingfile),
  cnum: text(row.cnum),
  linkedid: text(row.linkedid) || text(row.uniqueid),
  sequence: row.sequence === null || row.sequence === undefined ? null : Number(row.sequence),
});

const text = (value: unknown) => (value === null || value === undefined ? '' : String(value).trim());
