import { Logger } from '@nestjs/common';
import { DateTime } from 'luxon';
import { CallEvent } from '../../calls/call';
import { BridgeMetrics } from '../../metrics/bridge-metrics';
import { CallStore } from '../../store/call-store';
import { FollowPositionStore } from '../../store/follow-position-store';
import { backoffMs } from '../connection-follower';
import { FollowSink } from '../follow-sink';
import { LedgerStatusView } from '../pbx-follower';
import { CdrRow, ledgerCallOf, LedgerMapping, local, naive, rowKey } from './cdr-calls';
import { CdrSource, PAGE_ROWS, PageCursor } from './cdr-source';

export interface CdrLedgerOptions {
  /** Between reads of the table. */
  pollMs?: number;
  /**
   * The overlap: each read goes back this far behind the position (in row end time), for rows dispatched
   * late (cdr.conf batch mode, up to its `time`), clock steps and rows of one second written out of order.
   */
  overlapSec?: number;
  /** The longest call expected: rows are looked up from (position − overlap − this) by calldate (indexed). */
  maxCallSec?: number;
  /** A complete call (its outside party's rows are in) is taken once no new row of it came for this long. */
  graceMs?: number;
  /**
   * Rows of a call not complete yet (a queue member who gave up, a transfer's consultation) are forgotten
   * after this long quiet: never taken from them, they are read again from the table when the call completes.
   */
  orphanMs?: number;
  /**
   * Beside AMI: whether the followed connection sees the call live on the PBX (undefined: it cannot tell
   * now). An outbound call's originating row comes when the employee's phone hangs up, which a transfer
   * does while the outside party talks on: such a call is taken only once AMI no longer sees it, or once
   * AMI could not tell for `liveUnknownMs`.
   */
  liveOnPbx?: (callId: string) => boolean | undefined;
  liveUnknownMs?: number;
  /** Whether this replica reads now (holds the portal's delivery lease); checked every gateMs. */
  followHere?: () => boolean;
  gateMs?: number;
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
}

/** What a ledger reads from and writes to: the table, the sink, and the portal's stores. */
export interface CdrLedgerParts {
  source: CdrSource;
  /** The database without credentials, for health details and logs. */
  label: string;
  mapping: LedgerMapping;
  sink: FollowSink & { idle(): Promise<void> };
  positions: FollowPositionStore;
  calls: CallStore;
  portalId: string;
  metrics?: BridgeMetrics;
}

interface PendingCall {
  rows: CdrRow[];
  /** When (our clock) a row of it was last read for the first time. */
  lastNewRowAt: number;
}

/** What a waiting call's rows say: complete (take it after the grace), waiting for its outside party, or for AMI. */
type Readiness = 'complete' | 'partial' | 'live';

/** The position's name in the store (one ledger per portal today). */
const SOURCE = 'asterisk-cdr';

const minus = (at: string, seconds: number) => local(naive(at) - seconds * 1000);
/** Before any row: what an empty table is read from until its first row gives a position. */
const EPOCH = '1970-01-01 00:00:00';

/**
 * Reads FreePBX's `asteriskcdrdb.cdr` as the ledger of record (real PBX output: no increasing key, each
 * Party A's rows land when that channel hangs up, so one call's rows land minutes apart). Every poll reads
 * the rows whose leg ENDED at or after (position − overlap); a call is taken once complete (`readiness`)
 * and quiet for the grace period, from all its rows in the table, unless followed or posted events already
 * ended it. The position is on the PBX's clock and is stored only once what was read up to it is stored, so
 * a restart or a takeover reads on from there; the overlap and the intake's keys make re-reading harmless.
 */
export class CdrLedger {
  private readonly logger = new Logger('PbxLedger');
  private readonly options: Required<Omit<CdrLedgerOptions, 'followHere' | 'liveOnPbx'>> & CdrLedgerOptions;
  private readonly seen = new Map<string, string>();
  private readonly pending = new Map<string, PendingCall>();
  /** Calls taken (or skipped), by linkedid, with their newest row end: late rows of them are ignored. */
  private readonly taken = new Map<string, string>();
  private position?: string;
  private newest?: string;
  private timer?: NodeJS.Timeout;
  private stopped = true;
  private running = false;
  private connected = false;
  private readingHere = false;
  private lastError?: string;
  private failures = 0;
  private rowsRead = 0;
  private callsTaken = 0;

  constructor(
    private readonly parts: CdrLedgerParts,
    options: CdrLedgerOptions = {},
  ) {
    this.options = {
      pollMs: 1000,
      overlapSec: 300,
      maxCallSec: 6 * 3600,
      graceMs: 2000,
      orphanMs: 60_000,
      liveUnknownMs: 600_000,
      gateMs: 500,
      reconnectMinMs: 500,
      reconnectMaxMs: 30_000,
      ...options,
    };
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.parts.metrics?.ledgerConnected.set(0);
    await this.parts.source.close();
  }

  status(): LedgerStatusView {
    const newest = this.newest
      ? DateTime.fromFormat(this.newest, 'yyyy-MM-dd HH:mm:ss', { zone: this.parts.mapping.zone })
      : undefined;
    const lagSec = newest?.isValid ? Math.max(0, Math.round((Date.now() - newest.toMillis()) / 1000)) : null;
    return {
      source: SOURCE,
      target: this.parts.label,
      readingHere: this.readingHere,
      connected: this.connected,
      lastError: this.lastError ?? null,
      position: this.position ?? null,
      lagSec,
      rowsRead: this.rowsRead,
      callsTaken: this.callsTaken,
      callsPending: this.pending.size,
    };
  }

  /** One read: rows, ready calls to the sink, the position stored. */
  async poll(): Promise<void> {
    if (this.position === undefined) {
      // First start: from the newest row's start on the PBX's own clock, minus the overlap (older history
      // is not replayed; the bridge's clock says nothing about the PBX's); afterwards, the stored one.
      this.position =
        (await this.parts.positions.get(this.parts.portalId, SOURCE)) ??
        (await this.parts.source.newestCalldate());
    }
    const endedFrom = this.position === undefined ? EPOCH : minus(this.position, this.options.overlapSec);
    await this.read(endedFrom);
    await this.takeReady();
    await this.advance(endedFrom);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), ms);
  }

  private async tick(): Promise<void> {
    if (this.stopped || this.running) return;
    const here = this.options.followHere ? this.options.followHere() : true;
    if (!here) {
      if (this.readingHere) this.forget();
      this.readingHere = false;
      this.setConnected(false);
      this.schedule(this.options.gateMs);
      return;
    }
    this.readingHere = true;
    this.running = true;
    try {
      await this.poll();
      this.setConnected(true);
      this.lastError = undefined;
      this.failures = 0;
      this.schedule(this.options.pollMs);
    } catch (error) {
      this.setConnected(false);
      this.failures++;
      // mysql2's messages name the user and host, never the password; the URL itself is never printed.
      this.lastError = `${this.parts.label}: ${(error as Error).message}`;
      const { reconnectMinMs, reconnectMaxMs } = this.options;
      const wait = Math.round(backoffMs(Math.min(this.failures - 1, 10), reconnectMinMs, reconnectMaxMs));
      if (this.failures === 1 || this.failures % 10 === 0) {
        this.logger.warn(`CDR ledger not readable, retrying in ${wait} ms: ${this.lastError}`);
      }
      this.schedule(wait);
    } finally {
      this.running = false;
    }
  }

  /** Another replica reads now: what this one held is re-read from the shared position if it comes back. */
  private forget(): void {
    this.position = undefined;
    this.pending.clear();
    this.seen.clear();
    this.taken.clear();
  }

  private setConnected(connected: boolean): void {
    this.connected = connected;
    this.parts.metrics?.ledgerConnected.set(connected ? 1 : 0);
  }

  private async read(endedFrom: string): Promise<void> {
    const calldateFrom = endedFrom === EPOCH ? EPOCH : minus(endedFrom, this.options.maxCallSec);
    let cursor: PageCursor | undefined;
    for (;;) {
      const rows = await this.parts.source.page(calldateFrom, endedFrom, cursor);
      for (const row of rows) this.accept(row);
      if (rows.length < PAGE_ROWS) break;
      const last = rows[rows.length - 1];
      cursor = { calldate: last.calldate, uniqueid: last.uniqueid, sequence: last.sequence ?? -1 };
    }
    // Rows ending before the window are never read again: their keys need not be kept.
    for (const [key, ended] of this.seen) if (ended < endedFrom) this.seen.delete(key);
    for (const [linkedid, ended] of this.taken) if (ended < endedFrom) this.taken.delete(linkedid);
  }

  private accept(row: CdrRow): void {
    const key = rowKey(row);
    if (this.seen.has(key)) return;
    this.seen.set(key, row.ended);
    this.rowsRead++;
    this.parts.metrics?.ledgerRows.inc();
    if (!this.newest || row.ended > this.newest) this.newest = row.ended;
    const took = this.taken.get(row.linkedid);
    if (took !== undefined) {
      // A leg of a call delivered (or ended elsewhere) from its complete rows: the same hang-up's last rows.
      if (row.ended > took) this.taken.set(row.linkedid, row.ended);
      return;
    }
    const call = this.pending.get(row.linkedid) ?? { rows: [], lastNewRowAt: 0 };
    call.rows.push(row);
    call.lastNewRowAt = Date.now();
    this.pending.set(row.linkedid, call);
  }

  /**
   * A call is complete once its outside party's rows are in: a trunk's channel as Party A (an inbound
   * call's originating row, an outbound call's trunk after a transfer; each written when that channel
   * hangs up, which ends the call), or an outbound call's originating row (the phone dialling the trunk)
   * when nothing says the trunk talks on. Anything else (a queue member's row, a consultation) is partial.
   */
  private readiness(linkedid: string, rows: CdrRow[]): Readiness {
    const kindOf = (channel: string) => this.parts.mapping.endpoints.classify(channel || undefined).kind;
    if (rows.some((row) => kindOf(row.channel) === 'trunk')) return 'complete';
    const origin = rows.filter((row) => row.uniqueid === linkedid);
    if (origin.length === 0) return 'partial';
    const outbound = origin.some(
      (row) => kindOf(row.dstchannel) === 'trunk' && row.disposition === 'ANSWERED',
    );
    if (!outbound || !this.options.liveOnPbx) return 'complete';
    return this.options.liveOnPbx(linkedid) === false ? 'complete' : 'live';
  }

  private async takeReady(): Promise<void> {
    const now = Date.now();
    const events: CallEvent[] = [];
    for (const [linkedid, call] of this.pending) {
      const quiet = now - call.lastNewRowAt;
      const readiness = this.readiness(linkedid, call.rows);
      if (readiness === 'partial') {
        // Never taken from a partial view: the call's rows are read again by linkedid when it completes.
        if (quiet >= this.options.orphanMs) this.pending.delete(linkedid);
        continue;
      }
      if (quiet < this.options.graceMs) continue;
      // AMI still sees the outside party: its end comes from AMI or from the trunk's own rows; AMI down: wait.
      if (
        readiness === 'live' &&
        (this.options.liveOnPbx?.(linkedid) || quiet < this.options.liveUnknownMs)
      ) {
        continue;
      }
      const rows = await this.callRows(linkedid, call.rows);
      const known = await this.parts.calls.findCall(this.parts.portalId, linkedid);
      this.pending.delete(linkedid);
      if (known?.party.ended) {
        this.markTaken(linkedid, rows);
        this.parts.metrics?.ledgerCalls.inc({ outcome: 'already_ended' });
        continue;
      }
      let outcome;
      try {
        outcome = ledgerCallOf(linkedid, rows, this.parts.mapping);
      } catch (error) {
        this.markTaken(linkedid, rows);
        this.parts.metrics?.ledgerCalls.inc({ outcome: 'rejected' });
        this.logger.warn(`ledger call ${linkedid} not taken: ${(error as Error).message}`);
        continue;
      }
      if ('ignored' in outcome) {
        // Phone to phone so far: not marked taken, so a later row naming a trunk still makes it a call.
        this.parts.metrics?.ledgerCalls.inc({ outcome: 'internal' });
        continue;
      }
      this.markTaken(linkedid, rows);
      events.push(...outcome.events);
      this.callsTaken++;
      this.parts.metrics?.ledgerCalls.inc({ outcome: 'taken' });
    }
    if (events.length === 0) return;
    this.parts.sink.submit(events);
    // The position moves only past what is stored: a crash before this re-reads these calls.
    await this.parts.sink.idle();
  }

  /** The call's rows in the table (the segments written long before, whatever was read) and those read. */
  private async callRows(linkedid: string, read: CdrRow[]): Promise<CdrRow[]> {
    const earliest = read.map((row) => row.calldate).reduce((a, b) => (a < b ? a : b));
    const stored = await this.parts.source.callRows(linkedid, minus(earliest, this.options.maxCallSec));
    const rows = new Map(read.map((row) => [rowKey(row), row]));
    for (const row of stored) if (!rows.has(rowKey(row))) rows.set(rowKey(row), row);
    return [...rows.values()];
  }

  private markTaken(linkedid: string, rows: CdrRow[]): void {
    this.taken.set(
      linkedid,
      rows.map((row) => row.ended).reduce((a, b) => (a > b ? a : b)),
    );
  }

  /**
   * The newest row end read, held back to the oldest row of a complete call still waiting (its grace, or
   * AMI): a restart reads it again. Partial calls hold nothing back: they are read by linkedid later.
   */
  private async advance(endedFrom: string): Promise<void> {
    let next = this.newest ?? this.position;
    for (const [linkedid, call] of this.pending) {
      if (this.readiness(linkedid, call.rows) === 'partial') continue;
      for (const row of call.rows) if (next && row.ended < next) next = row.ended;
    }
    if (!next || (this.position && (next <= this.position || next < endedFrom))) {
      if (this.newest) this.parts.metrics?.ledgerLag.set(this.status().lagSec ?? 0);
      return;
    }
    this.position = next;
    await this.parts.positions.put(this.parts.portalId, SOURCE, next, Date.now());
    this.parts.metrics?.ledgerLag.set(this.status().lagSec ?? 0);
  }
}
