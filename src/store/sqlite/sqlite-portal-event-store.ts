import Database from 'better-sqlite3';
import { fromPortalEventRow, PortalEventRow } from '../portal-event-row';
import {
  NewPortalEvent,
  portalEventStatements,
  PortalEventStore,
  StoredPortalEvent,
} from '../portal-event-store';
import { SQLITE_DIALECT, SqliteDatabase } from './sqlite-database';

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
