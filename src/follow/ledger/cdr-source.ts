import { createPool, Pool, RowDataPacket } from 'mysql2/promise';
import { readCredentialUrl } from '../../common/credential-url';
import { EgressPolicy } from '../../common/egress';
import { CdrRow } from './cdr-calls';
import { PbxTarget } from '../pbx-connection';

/** Rows per query at most: a busy window is read in pages, never in one unbounded result. */
export const PAGE_ROWS = 500;

/** Where a page starts: strictly after this row in (calldate, uniqueid, sequence) order. */
export interface PageCursor {
  calldate: string;
  uniqueid: string;
  sequence: number;
}

/** ASTERISK_CDR_URL; `tls` is MySQL's TLS upgrade before the login (`mysqls://`, `?ssl=true`). */
export interface CdrTarget extends PbxTarget {
  database: string;
  /** Without credentials, for health and logs. */
  label: string;
}

/** Whether a `?ssl=` value turns TLS on: any value but false, 0, off, disabled. */
export function sslRequested(value: string | null): boolean {
  return value !== null && !/^(false|0|off|disabled?)$/i.test(value);
}

/**
 * ASTERISK_CDR_URL read by hand (a password may hold any character) and made a Destination by `egress`:
 * the problem names the variable and the rule, never the value.
 */
export function parseCdrTarget(
  url: string,
  egress: EgressPolicy,
  variable = 'ASTERISK_CDR_URL',
): CdrTarget | { problem: string } {
  const parsed = readCredentialUrl(url, 'ASTERISK_CDR_URL', variable);
  if ('problem' in parsed) return parsed;
  const database = parsed.path.slice(1);
  const port = parsed.port ?? 3306;
  const tls = parsed.scheme === 'mysqls' || sslRequested(parsed.query.get('ssl'));
  const destination = egress.destination({ variable, host: parsed.host, port, tls, credentials: true });
  if ('problem' in destination) return destination;
  return {
    destination,
    tls,
    user: parsed.user,
    password: parsed.password,
    database,
    label: `mysql://${destination.label}/${database}${tls ? ' (tls)' : ''}`,
  };
}

/** What a server answers when it refuses the login (or the grant to read `cdr`): wrong user or password. */
const LOGIN_REFUSED = new Set([
  'ER_ACCESS_DENIED_ERROR',
  'ER_DBACCESS_DENIED_ERROR',
  'ER_TABLEACCESS_DENIED_ERROR',
  'ER_ACCESS_DENIED_NO_PASSWORD_ERROR',
]);

/**
 * The CDR table over at most two `mysql2` connections, each socket the egress gate's (TLS, `?ssl=true`,
 * runs over it). Times are read as text (`dateStrings`): the column is the PBX's local time without a zone.
 */
export class CdrSource {
  private readonly pool: Pool;

  constructor(target: CdrTarget, timeoutMs = 5000) {
    const { destination } = target;
    this.pool = createPool({
      host: destination.host,
      port: destination.port,
      user: target.user,
      password: target.password,
      database: target.database,
      // A certificate is always checked, and its name against the host's.
      ...(target.tls ? { ssl: { rejectUnauthorized: true, verifyIdentity: true } } : {}),
      stream: () => destination.connect({ noDelay: true, keepAlive: true, keepAliveInitialDelay: 10_000 }),
      connectionLimit: 2,
      maxIdle: 1,
      idleTimeout: 60_000,
      connectTimeout: timeoutMs,
      dateStrings: true,
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
    try {
      await this.pool.query('SELECT 1 FROM cdr LIMIT 1');
    } catch (error) {
      // The server spoke MySQL and refused the login: marked so (isCredentialsRefused), its words kept out.
      if (LOGIN_REFUSED.has((error as { code?: string }).code ?? '')) {
        throw Object.assign(new Error('the MySQL server refused the login'), { credentialsRefused: true });
      }
      throw error;
    }
  }

  async close(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }
}

const COLUMNS = `DATE_FORMAT(calldate, '%Y-%m-%d %H:%i:%s') AS calldate,
       DATE_FORMAT(calldate + INTERVAL duration SECOND, '%Y-%m-%d %H:%i:%s') AS ended,
       src, dst, channel, dstchannel, lastapp, duration, billsec, disposition, uniqueid, did,
       recordingfile, cnum, outbound_cnum, linkedid, sequence`;

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
  outbound_cnum: text(row.outbound_cnum),
  linkedid: text(row.linkedid) || text(row.uniqueid),
  sequence: row.sequence === null || row.sequence === undefined ? null : Number(row.sequence),
});

const text = (value: unknown) => (value === null || value === undefined ? '' : String(value).trim());
