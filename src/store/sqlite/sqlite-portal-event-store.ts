import Database from 'better-sqlite3';
import { fromPortalEventRow, PortalEventRow } from '../portal-event-row';
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import {
  NewPortalEvent,
  portalEventStatements,
  PortalEventStore,
  PortalSignal,
  signalOf,
  SignalListeners,
  StoredPortalEvent,
} from '../portal-event-store';
import { SQLITE_DIALECT, SqliteDatabase } from './sqlite-database';

/** Other processes on the file look for new signals this often (one indexed read while anyone watches). */
export const SIGNAL_POLL_MS = 250;
/** Signals older than this are deleted: every process has long read them. */
const SIGNAL_KEEP_MS = 600_000;

/**
 * Portal events in the SQLite file. A claim is one UPDATE … RETURNING, atomic in SQLite, so several
 * processes on one file never claim one event together.
 */
export class SqlitePortalEventStore extends PortalEventStore {
  private readonly insert: Database.Statement;
  private readonly findKey: Database.Statement;
  private readonly claim: Database.Statement;
  private readonly settleRow: Database.Statement;
  private readonly retryRow: Database.Statement;
  private readonly listRows: Database.Statement;
  private readonly deleteRows: Database.Statement;
  private readonly insertSignal: Database.Statement;
  private readonly newSignals: Database.Statement;
  private readonly lastSignal: Database.Statement;
  private readonly pruneSignals: Database.Statement;
  private readonly listeners = new SignalListeners();
  private readonly origin = randomUUID();
  private seenSignal = 0;
  private pollTimer?: NodeJS.Timeout;

  constructor(database: SqliteDatabase) {
    super();
    const db = database.connection;
    this.insert = db.prepare(
      `INSERT INTO portal_events (portal_id, dedupe_key, event, payload, received_at, state, attempts, due_at)
       VALUES (@portalId, @dedupeKey, @event, @payload, @receivedAt, 'pending', 0, @receivedAt)
       ON CONFLICT (portal_id, dedupe_key) DO NOTHING RETURNING id`,
    );
    this.findKey = db.prepare('SELECT id FROM portal_events WHERE portal_id = ? AND dedupe_key = ?');
    this.claim = db.prepare(
      `UPDATE portal_events SET due_at = @until, attempts = attempts + 1
       WHERE id IN (SELECT id FROM portal_events
                    WHERE portal_id = @portalId AND state = 'pending' AND due_at <= @now
                    ORDER BY id LIMIT @limit)
       RETURNING *`,
    );
    this.settleRow = db.prepare(
      `UPDATE portal_events SET state = @state, due_at = NULL, settled_at = @now,
         last_error = COALESCE(@note, last_error)
       WHERE id = @id AND state = 'pending'`,
    );
    this.retryRow = db.prepare(
      `UPDATE portal_events SET due_at = @dueAt, last_error = @error WHERE id = @id AND state = 'pending'`,
    );
    this.listRows = db.prepare('SELECT * FROM portal_events WHERE portal_id = ? ORDER BY id DESC LIMIT ?');
    this.deleteRows = db.prepare(portalEventStatements.deleteSettled(SQLITE_DIALECT, 0, 0).text);
    this.insertSignal = db.prepare(
      'INSERT INTO portal_signals (origin, payload, created_at) VALUES (@origin, @payload, @now)',
    );
    this.newSignals = db.prepare(
      'SELECT seq, origin, payload FROM portal_signals WHERE seq > ? ORDER BY seq LIMIT 500',
    );
    this.lastSignal = db.prepare('SELECT COALESCE(MAX(seq), 0) AS seq FROM portal_signals');
    this.pruneSignals = db.prepare('DELETE FROM portal_signals WHERE created_at < ?');
  }

  /**
   * Here at once; other processes on the same file read it at their next look (a small log of signals
   * in the file, numbered, so none is missed between two looks). An uninstall (rare) resolves only after
   * two looks' time, so the other processes have stopped too when the portal gets its answer.
   */
  async publish(signal: PortalSignal): Promise<void> {
    this.listeners.emit(signal);
    const now = Date.now();
    this.insertSignal.run({ origin: this.origin, payload: JSON.stringify(signal), now });
    this.pruneSignals.run(now - SIGNAL_KEEP_MS);
    if (signal.kind === 'uninstalled') await delay(2 * SIGNAL_POLL_MS);
  }

  watch(listener: (signal: PortalSignal) => void): () => void {
    if (this.listeners.size === 0) {
      this.seenSignal = (this.lastSignal.get() as { seq: number }).seq;
      this.pollTimer = setInterval(() => this.readSignals(), SIGNAL_POLL_MS);
      this.pollTimer.unref();
    }
    const stop = this.listeners.add(listener);
    return () => {
      stop();
      if (this.listeners.size === 0) clearInterval(this.pollTimer);
    };
  }

  private readSignals(): void {
    let rows: { seq: number; origin: string; payload: string }[];
    try {
      rows = this.newSignals.all(this.seenSignal) as typeof rows;
    } catch {
      return; // The file is closing (shutdown): nothing more to hear.
    }
    for (const row of rows) {
      this.seenSignal = row.seq;
      if (row.origin === this.origin) continue;
      let signal: PortalSignal | undefined;
      try {
        signal = signalOf(JSON.parse(row.payload));
      } catch {
        signal = undefined;
      }
      if (signal) this.listeners.emit(signal);
    }
  }

  async add(event: NewPortalEvent): Promise<{ id: number; duplicate: boolean }> {
    const row = this.insert.get(event) as { id: number } | undefined;
    if (row) return { id: row.id, duplicate: false };
    const existing = this.findKey.get(event.portalId, event.dedupeKey) as { id: number };
    return { id: existing.id, duplicate: true };
  }

  async claimDue(portalId: string, leaseMs: number, limit: number): Promise<StoredPortalEvent[]> {
    const now = Date.now();
    const rows = this.claim.all({ portalId, now, until: now + leaseMs, limit }) as PortalEventRow[];
    return rows.map(fromPortalEventRow).sort((a, b) => a.id - b.id);
  }

  async settle(id: number, state: 'processed' | 'ignored', note?: string): Promise<void> {
    this.settleRow.run({ id, state, now: Date.now(), note: note ?? null });
  }

  async retry(id: number, delayMs: number, error: string): Promise<void> {
    this.retryRow.run({ id, dueAt: Date.now() + delayMs, error });
  }

  async list(portalId: string, limit: number): Promise<StoredPortalEvent[]> {
    return (this.listRows.all(portalId, limit) as PortalEventRow[]).map(fromPortalEventRow);
  }

  async deleteSettled(before: number, limit: number): Promise<number> {
    const { values } = portalEventStatements.deleteSettled(SQLITE_DIALECT, before, limit);
    return this.deleteRows.all(...values).length;
  }
}
