import { fromPortalEventRow, PortalEventRow } from '../portal-event-row';
import {
  NewPortalEvent,
  portalEventStatements,
  PortalEventStore,
  StoredPortalEvent,
} from '../portal-event-store';
import { DB_NOW_MS, POSTGRES_DIALECT, PostgresDatabase } from './postgres-database';

/**
 * Portal events in PostgreSQL, timed by the database's clock. A claim locks the due rows with
 * `FOR UPDATE SKIP LOCKED` and moves their `due_at` past the lease in one statement: replicas claiming at
 * once get different events.
 */
export class PostgresPortalEventStore extends PortalEventStore {
  constructor(private readonly db: PostgresDatabase) {
    super();
  }

  async add(event: NewPortalEvent): Promise<{ id: number; duplicate: boolean }> {
    const inserted = await this.db.query<{ id: string }>(
      `INSERT INTO portal_events (portal_id, dedupe_key, event, payload, received_at, state, attempts, due_at)
       VALUES ($1, $2, $3, $4, $5, 'pending', 0, $5)
       ON CONFLICT (portal_id, dedupe_key) DO NOTHING RETURNING id`,
      [event.portalId, event.dedupeKey, event.event, event.payload, event.receivedAt],
    );
    if (inserted[0]) return { id: Number(inserted[0].id), duplicate: false };
    const existing = await this.db.query<{ id: string }>(
      'SELECT id FROM portal_events WHERE portal_id = $1 AND dedupe_key = $2',
      [event.portalId, event.dedupeKey],
    );
    return { id: Number(existing[0]?.id), duplicate: true };
  }

  async claimDue(portalId: string, leaseMs: number, limit: number): Promise<StoredPortalEvent[]> {
    const rows = await this.db.query<PortalEventRow>(
      `UPDATE portal_events SET due_at = ${DB_NOW_MS} + $2, attempts = attempts + 1
       WHERE id IN (SELECT id FROM portal_events
                    WHERE portal_id = $1 AND state = 'pending' AND due_at <= ${DB_NOW_MS}
                    ORDER BY id LIMIT $3 FOR UPDATE SKIP LOCKED)
       RETURNING *`,
      [portalId, leaseMs, limit],
    );
    return rows.map(fromPortalEventRow).sort((a, b) => a.id - b.id);
  }

  async settle(id: number, state: 'processed' | 'ignored', note?: string): Promise<void> {
    await this.db.query(
      `UPDATE portal_events SET state = $2, due_at = NULL, settled_at = ${DB_NOW_MS},
         last_error = COALESCE($3, last_error)
       WHERE id = $1 AND state = 'pending'`,
      [id, state, note ?? null],
    );
  }

  async retry(id: number, delayMs: number, error: string): Promise<void> {
    await this.db.query(
      `UPDATE portal_events SET due_at = ${DB_NOW_MS} + $2, last_error = $3 WHERE id = $1 AND state = 'pending'`,
      [id, delayMs, error],
    );
  }

  async list(portalId: string, limit: number): Promise<StoredPortalEvent[]> {
    const rows = await this.db.query<PortalEventRow>(
      'SELECT * FROM portal_events WHERE portal_id = $1 ORDER BY id DESC LIMIT $2',
      [portalId, limit],
    );
    return rows.map(fromPortalEventRow);
  }

  async deleteSettled(before: number, limit: number): Promise<number> {
    const { text, values } = portalEventStatements.deleteSettled(POSTGRES_DIALECT, before, limit);
    return (await this.db.query(text, values)).length;
  }
}
