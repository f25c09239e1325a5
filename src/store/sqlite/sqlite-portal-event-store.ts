import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { sqlOf } from '../fence';
import { PortalSignal, signalOf, SignalListeners } from '../portal-event-store';
import { SqlPortalEventStore } from '../sql-portal-event-store';
import { SQLITE_DIALECT, SqliteDatabase } from './sqlite-database';

/** Other processes on the file look for new signals this often (one indexed read while anyone watches). */
export const SIGNAL_POLL_MS = 250;
/** Signals older than this are deleted: every process has long read them. */
const SIGNAL_KEEP_MS = 600_000;
const sql = sqlOf(SQLITE_DIALECT);

/**
 * Portal events in the SQLite file, timed by the host's clock. A claim is one UPDATE … RETURNING, atomic in
 * SQLite, so several processes on one file never claim one event together.
 */
export class SqlitePortalEventStore extends SqlPortalEventStore {
  private readonly listeners = new SignalListeners();
  private readonly origin = randomUUID();
  private seenSignal = 0;
  private pollTimer?: NodeJS.Timeout;

  constructor(private readonly database: SqliteDatabase) {
    super(database, Date.now);
  }

  /**
   * Here at once; other processes on the same file read it at their next look (a small log of signals
   * in the file, numbered, so none is missed between two looks). An uninstall (rare) resolves only after
   * two looks' time, so the other processes have stopped too when the portal gets its answer.
   */
  async publish(signal: PortalSignal): Promise<void> {
    this.listeners.emit(signal);
    const now = Date.now();
    this.database.runNow(
      sql`INSERT INTO portal_signals (origin, payload, created_at)
       VALUES (${this.origin}, ${JSON.stringify(signal)}, ${now})`,
    );
    this.database.runNow(sql`DELETE FROM portal_signals WHERE created_at < ${now - SIGNAL_KEEP_MS}`);
    if (signal.kind === 'uninstalled') await delay(2 * SIGNAL_POLL_MS);
  }

  watch(listener: (signal: PortalSignal) => void): () => void {
    if (this.listeners.size === 0) {
      const [last] = this.database.runNow<{ seq: number }>(
        sql`SELECT COALESCE(MAX(seq), 0) AS seq FROM portal_signals`,
      );
      this.seenSignal = last.seq;
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
      rows = this.database.runNow(
        sql`SELECT seq, origin, payload FROM portal_signals WHERE seq > ${this.seenSignal} ORDER BY seq LIMIT 500`,
      );
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
}
