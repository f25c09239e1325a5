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
  duration: number;
  billsec: number;
  disposition: string;
  uniqueid: string;
  did?: string;
  recordingfile?: string;
  cnum?: string;
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

  /** The PBX's local time text of a moment (seconds since 1970), as cdr_adaptive_odbc writes calldate. */
  localTime(seconds: number): string {
    return DateTime.fromSeconds(Math.floor(seconds), { zone: this.zone }).toFormat('yyyy-MM-dd HH:mm:ss');
  }

  async close(): Promise<void> {
    await this.root.query(`DROP DATABASE IF EXISTS \`${this.name}\``).catch(() => undefined);
    await this.root.end().catch(() => undefined);
  }
}

interface ChanState {
  name: string;
  uniqueid: string;
  linkedid: string;
  callerNum: string;
  exten: string;
  created: number;
  first: boolean;
  dials: { dest: string; status?: string; answeredAt?: number; at: number }[];
  recordingfile?: string;
}

const DISPOSITION: Record<string, string> = {
  ANSWER: 'ANSWERED',
  BUSY: 'BUSY',
  NOANSWER: 'NO ANSWER',
  CANCEL: 'NO ANSWER',
  CONGESTION: 'CONGESTION',
  CHANUNAVAIL: 'FAILED',
};

/**
 * Asterisk's CDR engine writing to `cdr` as the AMI double plays calls (real PBX output): when a channel
 * that dialled (Party A) hangs up, one row per destination it dialled (a ring group's parallel dial: one
 * row each, each with its own disposition), or one row with no destination for the call's first channel
 * when it dialled nobody (voicemail, IVR); `uniqueid` = Party A's, `linkedid` = its latest, `sequence` a
 * global counter; times on the double's clock (its `Timestamp`s) in the PBX's local time. Rows land when the
 * leg ends, so a long call's row lands after later calls' rows.
 */
export class CdrWriter {
  private readonly channels = new Map<string, ChanState>();
  private sequence = 1;
  private writing: Promise<void> = Promise.resolve();
  /** While set, rows are held (the CDR backend is down, or batch mode); `release()` writes them. */
  private held?: CdrInsert[];
  rowsWritten = 0;

  constructor(
    private readonly db: CdrDatabase,
    pbx: AmiDouble,
  ) {
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

  private observe(text: string): void {
    const fields = new Map<string, string>();
    for (const line of text.split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon > 0 && !fields.has(line.slice(0, colon)))
        fields.set(line.slice(0, colon), line.slice(colon + 1).trim());
    }
    const event = fields.get('Event');
    const clock = Number(fields.get('Timestamp'));
    const uniqueid = fields.get('Uniqueid') ?? '';
    const known = this.channels.get(uniqueid);
    if (known && fields.get('Linkedid')) known.linkedid = fields.get('Linkedid') as string;
    if (event === 'Newchannel') {
      this.channels.set(uniqueid, {
        name: fields.get('Channel') ?? '',
        uniqueid,
        linkedid: fields.get('Linkedid') ?? uniqueid,
        callerNum: fields.get('CallerIDNum') ?? '',
        exten: fields.get('Exten') ?? '',
        created: clock,
        first: fields.get('Linkedid') === uniqueid,
        dials: [],
      });
    } else if (event === 'DialBegin' && known) {
      known.dials.push({ dest: fields.get('DestChannel') ?? '', at: clock });
    } else if (event === 'DialEnd' && known) {
      const dial = [...known.dials].reverse().find((d) => d.dest === fields.get('DestChannel') && !d.status);
      if (dial) {
        dial.status = fields.get('DialStatus');
        if (dial.status === 'ANSWER') dial.answeredAt = clock;
      }
    } else if (event === 'Newexten' && known) {
      const file = fields.get('AppData')?.match(/CDR\(recordingfile\)=(.+)$/)?.[1];
      if (file) known.recordingfile = file;
    } else if (event === 'Hangup' && known) {
      this.channels.delete(uniqueid);
      this.write(this.rowsOf(known, clock));
    }
  }

  private rowsOf(chan: ChanState, end: number): CdrInsert[] {
    const base = {
      calldate: this.db.localTime(chan.created),
      src: chan.callerNum === '<unknown>' ? '' : chan.callerNum,
      dst: chan.exten,
      channel: chan.name,
      duration: Math.floor(end) - Math.floor(chan.created),
      uniqueid: chan.uniqueid,
      linkedid: chan.linkedid,
      did: chan.name.startsWith('PJSIP/trunk') ? chan.exten : '',
      cnum: chan.name.startsWith('PJSIP/trunk') ? '' : chan.callerNum,
      recordingfile: chan.recordingfile ?? '',
    };
    if (chan.dials.length === 0) {
      if (!chan.first) return [];
      return [
        {
          ...base,
          dstchannel: '',
          lastapp: 'VoiceMail',
          billsec: 0,
          disposition: 'ANSWERED',
          sequence: this.sequence++,
        },
      ];
    }
    return chan.dials.map((dial) => ({
      ...base,
      dstchannel: dial.dest,
      lastapp: 'Dial',
      disposition: DISPOSITION[dial.status ?? 'CANCEL'] ?? 'FAILED',
      billsec: dial.answeredAt === undefined ? 0 : Math.floor(end) - Math.floor(dial.answeredAt),
      sequence: this.sequence++,
    }));
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
