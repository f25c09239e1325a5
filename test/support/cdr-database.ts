import { DateTime } from 'luxon';
import { createConnection, Connection } from 'mysql2/promise';
import { randomBytes } from 'node:crypto';
import { AmiDouble } from './ami-double';

/**
 * A real MariaDB (127.0.0.1:3306, root over the unix socket as `mysql -uroot`; scripts/ensure-mariadb.sh
 * starts it) holding a FreePBX-shaped `asteriskcdrdb.cdr`: the exact column set of FreePBX's installer plus
 * the cdr module's `linkedid`, `peeraccount`, `sequence` (real PBX output), no primary key, no increasing
 * column. Each test folder gets its own database `bridge_test_<name>` and a password user on 127.0.0.1
 * that the bridge reads with (ASTERISK_CDR_URL).
 */
export const CDR_TABLE = `CREATE TABLE cdr (
  calldate datetime NOT NULL DEFAULT '0000-00-00 00:00:00',
  clid varchar(80) NOT NULL DEFAULT '',
  src varchar(80) NOT NULL DEFAULT '',
  dst varchar(80) NOT NULL DEFAULT '',
  dcontext varchar(80) NOT NULL DEFAULT '',
  channel varchar(80) NOT NULL DEFAULT '',
  dstchannel varchar(80) NOT NULL DEFAULT '',
  lastapp varchar(80) NOT NULL DEFAULT '',
  lastdata varchar(80) NOT NULL DEFAULT '',
  duration int(11) NOT NULL DEFAULT 0,
  billsec int(11) NOT NULL DEFAULT 0,
  disposition varchar(45) NOT NULL DEFAULT '',
  amaflags int(11) NOT NULL DEFAULT 0,
  accountcode varchar(20) NOT NULL DEFAULT '',
  uniqueid varchar(32) NOT NULL DEFAULT '',
  userfield varchar(255) NOT NULL DEFAULT '',
  did varchar(50) NOT NULL DEFAULT '',
  recordingfile varchar(255) NOT NULL DEFAULT '',
  cnum varchar(80) NOT NULL DEFAULT '',
  cnam varchar(80) NOT NULL DEFAULT '',
  outbound_cnum varchar(80) NOT NULL DEFAULT '',
  outbound_cnam varchar(80) NOT NULL DEFAULT '',
  dst_cnam varchar(80) NOT NULL DEFAULT '',
  linkedid varchar(32) NOT NULL DEFAULT '',
  peeraccount varchar(80) NOT NULL DEFAULT '',
  sequence int(11) NOT NULL DEFAULT 0,
  KEY calldate (calldate),
  KEY dst (dst),
  KEY accountcode (accountcode),
  KEY uniqueid (uniqueid),
  KEY did (did),
  KEY recordingfile (recordingfile),
  KEY linkedid (linkedid)
)`;

export interface CdrInsert {
  calldate: string;
  src: string;
  dst: string;
  dcontext?: string;
  channel: string;
  dstchannel: string;
  lastapp: string;
  lastdata?: string;
  duration: number;
  billsec: number;
  disposition: string;
  uniqueid: string;
  did?: string;
  recordingfile?: string;
  cnum?: string;
  outbound_cnum?: string;
  linkedid: string;
  sequence: number;
}

const ROOT = { user: 'root', socketPath: process.env.MARIADB_SOCKET ?? '/run/mysqld/mysqld.sock' };

export class CdrDatabase {
  private constructor(
    readonly name: string,
    readonly url: string,
    private readonly root: Connection,
    readonly zone: string,
  ) {}

  /** A fresh database `bridge_test_<suffix>` with an empty `cdr` and a reader with a password. */
  static async create(suffix: string, zone = 'UTC'): Promise<CdrDatabase> {
    const name = `bridge_test_${suffix}`;
    const user = `cdr_${suffix}`.slice(0, 32);
    const password = randomBytes(9).toString('base64url');
    const root = await createConnection(ROOT);
    await root.query(`DROP DATABASE IF EXISTS \`${name}\``);
    await root.query(`CREATE DATABASE \`${name}\``);
    await root.query(`CREATE TABLE \`${name}\`.${CDR_TABLE.slice('CREATE TABLE '.length)}`);
    await root.query(`CREATE OR REPLACE USER '${user}'@'127.0.0.1' IDENTIFIED BY '${password}'`);
    // What docs/PBX.md tells the FreePBX admin to grant: reading the one table.
    await root.query(`GRANT SELECT ON \`${name}\`.cdr TO '${user}'@'127.0.0.1'`);
    const url = `mysql://${user}:${encodeURIComponent(password)}@127.0.0.1:3306/${name}`;
    return new CdrDatabase(name, url, root, zone);
  }

  async insert(rows: CdrInsert[]): Promise<void> {
    for (const row of rows) {
      await this.root.query(`INSERT INTO \`${this.name}\`.cdr SET ?`, [
        {
          clid: `"" <${row.src}>`,
          dcontext: '',
          did: '',
          recordingfile: '',
          cnum: '',
          ...row,
        },
      ]);
    }
  }

  async count(): Promise<number> {
    const [rows] = await this.root.query(`SELECT COUNT(*) AS n FROM \`${this.name}\`.cdr`);
    return Number((rows as { n: number }[])[0].n);
  }

  /**
   * Talk time as the table tells it, in the CDR's whole seconds: from the first answered row's answer
   * (`calldate + duration - billsec`) to the last row's end (`calldate + duration`) of the Linkedid.
   */
  async talkSec(linkedid: string): Promise<number> {
    const [rows] = await this.root.query(
      `SELECT MIN(CASE WHEN disposition = 'ANSWERED' THEN TIMESTAMPDIFF(SECOND, '1970-01-01', calldate) + duration - billsec END) AS answer,
              MAX(TIMESTAMPDIFF(SECOND, '1970-01-01', calldate) + duration) AS end
         FROM \`${this.name}\`.cdr WHERE linkedid = ?`,
      [linkedid],
    );
    const [{ answer, end }] = rows as { answer: number | null; end: number | null }[];
    return Number(end) - Number(answer);
  }

  /** The PBX's local time text of a moment (seconds since 1970), as cdr_adaptive_odbc writes calldate. */
  localTime(seconds: number): string {
    return DateTime.fromSeconds(Math.floor(seconds), { zone: this.zone }).toFormat('yyyy-MM-dd HH:mm:ss');
  }

  async close(): Promise<void> {
    await this.root.query(`DROP DATABASE IF EXISTS \`${this.name}\``).catch(() => undefined);
    await this.root.end().catch(() => undefined);
  }
}

/** One CDR record of a Party A: one Party B (a dialled channel, or one a bridge change brought). */
interface Segment {
  dest: string;
  /** Virtual times of the Party A's call (its events' `Timestamp`s). */
  start: number;
  status?: string;
  answeredAt?: number;
  endedAt?: number;
  sequence: number;
  /** The application Party A ran: `Dial`, or `Queue` (whose caller was answered before the queue). */
  app: 'Dial' | 'Queue';
  lastdata: string;
}

interface ChanState {
  name: string;
  uniqueid: string;
  linkedid: string;
  callerNum: string;
  exten: string;
  created: number;
  /** This channel's own CDR's sequence (taken at creation; unwritten while it is only a Party B: gaps). */
  sequence: number;
  /** Its call's virtual clock → the PBX's one clock. */
  shift: number;
  first: boolean;
  queue?: string;
  bridge?: string;
  segments: Segment[];
  recordingfile?: string;
  /** FreePBX's CDR(did): the inbound route's FROM_DID. */
  did?: string;
  /** FreePBX's CDR(outbound_cnum): the caller ID the outbound route presented. */
  outboundCnum?: string;
}

const DISPOSITION: Record<string, string> = {
  ANSWER: 'ANSWERED',
  BUSY: 'BUSY',
  NOANSWER: 'NO ANSWER',
  CANCEL: 'NO ANSWER',
  CONGESTION: 'CONGESTION',
  CHANUNAVAIL: 'FAILED',
};

export interface CdrWriterOptions {
  /** The PBX's clock minus the bridge's, seconds (a PBX 10 minutes behind: -600). */
  offsetSec?: number;
}

/**
 * Asterisk's CDR engine writing to `cdr` as the AMI double plays calls (real PBX output, REAL-PBX.md §3.2
 * and §8): each Party A's records are written when THAT channel hangs up (a queue member's Local `;2` row
 * when the member stops ringing, the trunk's when the caller hangs up, an outbound phone's at its transfer),
 * one record per Party B: each destination of a parallel dial (sharing the record's start), each later dial
 * or bridge change a new record from that moment (a queue's next member, a blind transfer's new dial, the
 * target an attended transfer swaps in; that pair's Party A is the older channel). A Queue record's answer
 * is its start (the caller was answered before the queue), so its NO ANSWER rows have billsec > 0; a queue
 * call no agent took ends with a `Hangup` row, ANSWERED, 0 s. `uniqueid` = Party A's, `linkedid` its latest,
 * `sequence` a global counter taken by every channel's own record too (gaps). Times are one PBX clock: each
 * call's virtual clock (the double's `Timestamp`s) shifted so a call never starts before the rows already
 * written end, plus `offsetSec`, in the PBX's local time.
 */
export class CdrWriter {
  private readonly channels = new Map<string, ChanState>();
  private readonly bridges = new Map<string, Set<string>>();
  private readonly shifts = new Map<string, number>();
  private pbxClock = Date.now() / 1000;
  private sequence = 0;
  private writing: Promise<void> = Promise.resolve();
  /** While set, rows are held (the CDR backend is down, or batch mode); `release()` writes them. */
  private held?: CdrInsert[];
  private readonly offsetSec: number;
  rowsWritten = 0;

  constructor(
    private readonly db: CdrDatabase,
    pbx: AmiDouble,
    options: CdrWriterOptions = {},
  ) {
    this.offsetSec = options.offsetSec ?? 0;
    pbx.observe((text) => this.observe(text));
  }

  /** Resolves when every row of the calls over so far is in the table. */
  async flushed(): Promise<void> {
    await this.writing;
  }

  hold(): void {
    this.held ??= [];
  }

  release(): void {
    const rows = this.held ?? [];
    this.held = undefined;
    this.write(rows);
  }

  /** A moment of a channel's call on the PBX's clock, as its local time text. */
  private pbxTime(chan: ChanState, virtual: number): string {
    return this.db.localTime(virtual + chan.shift + this.offsetSec);
  }

  private observe(text: string): void {
    const fields = new Map<string, string>();
    for (const line of text.split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon > 0 && !fields.has(line.slice(0, colon))) {
        fields.set(line.slice(0, colon), line.slice(colon + 1).trim());
      }
    }
    const event = fields.get('Event');
    const clock = Number(fields.get('Timestamp'));
    const uniqueid = fields.get('Uniqueid') ?? '';
    const known = this.channels.get(uniqueid);
    if (known) {
      if (fields.get('Linkedid')) known.linkedid = fields.get('Linkedid') as string;
      this.pbxClock = Math.max(this.pbxClock, clock + known.shift);
    }
    if (event === 'Newchannel') {
      const linkedid = fields.get('Linkedid') ?? uniqueid;
      if (!this.shifts.has(linkedid)) {
        this.shifts.set(linkedid, Math.max(0, Math.ceil(this.pbxClock - clock)));
      }
      this.channels.set(uniqueid, {
        name: fields.get('Channel') ?? '',
        uniqueid,
        linkedid,
        callerNum: fields.get('CallerIDNum') ?? '',
        exten: fields.get('Exten') ?? '',
        created: clock,
        sequence: this.sequence++,
        shift: this.shifts.get(linkedid) ?? 0,
        first: linkedid === uniqueid,
        segments: [],
      });
    } else if (event === 'QueueCallerJoin' && known) {
      known.queue = fields.get('Queue');
    } else if (event === 'QueueCallerLeave' && known) {
      known.queue = undefined;
    } else if (event === 'DialBegin' && known) {
      this.open(known, fields.get('DestChannel') ?? '', clock);
    } else if (event === 'DialEnd' && known) {
      const dest = fields.get('DestChannel');
      const segment = [...known.segments].reverse().find((s) => s.dest === dest && !s.status);
      if (segment) {
        segment.status = fields.get('DialStatus');
        if (segment.status === 'ANSWER') segment.answeredAt = clock;
        else if (segment.app === 'Queue') segment.endedAt = clock;
      }
    } else if (event === 'BridgeEnter' && known) {
      this.enter(known, fields.get('BridgeUniqueid') ?? '', fields.get('SwapUniqueid'), clock);
    } else if (event === 'BridgeLeave' && known) {
      this.bridges.get(known.bridge ?? '')?.delete(uniqueid);
      known.bridge = undefined;
    } else if (event === 'VarSet' && known && /^_*FROM_DID$/.test(fields.get('Variable') ?? '')) {
      // The inbound route sets __FROM_DID and CDR(did) together.
      known.did = fields.get('Value');
    } else if (event === 'Newexten' && known) {
      const file = fields.get('AppData')?.match(/CDR\(recordingfile\)=(.+)$/)?.[1];
      if (file) known.recordingfile = file;
      const cnum = fields.get('AppData')?.match(/CDR\(outbound_cnum\)=(.*)$/)?.[1];
      if (cnum !== undefined) known.outboundCnum = cnum;
    } else if (event === 'Hangup' && known) {
      this.channels.delete(uniqueid);
      this.bridges.get(known.bridge ?? '')?.delete(uniqueid);
      // The records this channel was Party B of end now.
      for (const chan of this.channels.values()) {
        for (const segment of chan.segments) {
          if (segment.dest === known.name && segment.endedAt === undefined) segment.endedAt = clock;
        }
      }
      this.write(this.rowsOf(known, clock));
    }
  }

  /** A new Party B: the channel's first record starts at its creation; a later dial or bridge, from now. */
  private open(chan: ChanState, dest: string, at: number, answered = false): void {
    const ringing = chan.segments.find((s) => !s.status);
    const first = chan.segments.length === 0;
    chan.segments.push({
      dest,
      start: first ? chan.created : ringing ? ringing.start : at,
      sequence: first ? chan.sequence : this.sequence++,
      app: chan.queue ? 'Queue' : 'Dial',
      // FreePBX's Queue() arguments: queue, options, (url, announce), timeout.
      lastdata: chan.queue ? `${chan.queue},t,,,300` : dest.replace(/-[0-9a-f]+(;\d)?$/, ''),
      ...(answered ? { status: 'ANSWER', answeredAt: at } : {}),
    });
  }

  /** A channel joins a bridge: with each other member not yet its pair, the older of the two gets a record. */
  private enter(chan: ChanState, bridge: string, swapped: string | undefined, at: number): void {
    const members = this.bridges.get(bridge) ?? new Set<string>();
    this.bridges.set(bridge, members);
    for (const id of members) {
      const other = this.channels.get(id);
      if (!other || id === swapped) continue;
      const paired = (a: ChanState, b: ChanState) => a.segments.some((s) => s.dest === b.name);
      if (paired(chan, other) || paired(other, chan)) continue;
      const [partyA, partyB] = other.created <= chan.created ? [other, chan] : [chan, other];
      this.open(partyA, partyB.name, at, true);
    }
    members.add(chan.uniqueid);
    chan.bridge = bridge;
  }

  private rowsOf(chan: ChanState, end: number): CdrInsert[] {
    const trunk = chan.name.startsWith('PJSIP/trunk');
    const base = {
      src: chan.callerNum === '<unknown>' ? '' : chan.callerNum,
      dst: chan.exten,
      channel: chan.name,
      uniqueid: chan.uniqueid,
      linkedid: chan.linkedid,
      did: chan.did ?? (trunk ? chan.exten : ''),
      cnum: trunk ? '' : chan.callerNum,
      outbound_cnum: chan.outboundCnum ?? '',
      recordingfile: chan.recordingfile ?? '',
    };
    if (chan.segments.length === 0) {
      if (!chan.first) return [];
      return [
        {
          ...base,
          calldate: this.pbxTime(chan, chan.created),
          dstchannel: '',
          lastapp: 'VoiceMail',
          duration: Math.floor(end) - Math.floor(chan.created),
          billsec: 0,
          disposition: 'ANSWERED',
          sequence: chan.sequence,
        },
      ];
    }
    const rows: CdrInsert[] = chan.segments.map((segment) => {
      const ended = segment.endedAt ?? end;
      // A Queue record's answer is its start: the queue answered the caller, not the agent.
      const answer = segment.app === 'Queue' ? segment.start : segment.answeredAt;
      return {
        ...base,
        calldate: this.pbxTime(chan, segment.start),
        dstchannel: segment.dest,
        lastapp: segment.app,
        lastdata: segment.lastdata,
        duration: Math.floor(ended) - Math.floor(segment.start),
        billsec: answer === undefined ? 0 : Math.max(0, Math.floor(ended) - Math.floor(answer)),
        disposition: DISPOSITION[segment.status ?? 'CANCEL'] ?? 'FAILED',
        sequence: segment.sequence,
      };
    });
    const queued = chan.segments.some((s) => s.app === 'Queue');
    if (queued && !chan.segments.some((s) => s.status === 'ANSWER')) {
      rows.push({
        ...base,
        calldate: this.pbxTime(chan, end),
        dstchannel: '',
        lastapp: 'Hangup',
        duration: 0,
        billsec: 0,
        disposition: 'ANSWERED',
        sequence: this.sequence++,
      });
    }
    return rows;
  }

  private write(rows: CdrInsert[]): void {
    if (rows.length === 0) return;
    if (this.held) {
      this.held.push(...rows);
      return;
    }
    this.writing = this.writing.then(async () => {
      await this.db.insert(rows);
      this.rowsWritten += rows.length;
    });
  }
}
