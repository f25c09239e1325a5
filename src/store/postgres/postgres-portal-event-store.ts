import { fromPortalEventRow, PortalEventRow } from '../portal-event-row';
import { randomUUID } from 'node:crypto';
import {
  NewPortalEvent,
  portalEventStatements,
  PortalEventStore,
  PortalSignal,
  signalOf,
  SignalListeners,
  StoredPortalEvent,
} from '../portal-event-store';
import { DB_NOW_MS, POSTGRES_DIALECT, PostgresDatabase } from './postgres-database';

/** NOTIFY channel of portal signals (payload: JSON with the schema, the sender and the signal). */
const SIGNAL_CHANNEL = 'bridge_portal_signals';

/**
 * Portal events in PostgreSQL, timed by the database's clock. A claim locks the due rows with
 * `FOR UPDATE SKIP LOCKED` and moves their `due_at` past the lease in one statement: replicas claiming at
 * once get different events.
 */
export class PostgresPortalEventStore extends PortalEventStore {
  private readonly listeners = new SignalListeners();
  /** This process's signals come back by NOTIFY too: they were handled here already. */
  private readonly origin = randomUUID();
  private stopListening?: () => void;

  constructor(private readonly db: PostgresDatabase) {
    super();
  }

  /**
   * Here at once, to the other replicas by NOTIFY (delivered within milliseconds of this statement, on
   * the connection every replica keeps listening; the schema keeps deployments sharing a database apart).
   */
  async publish(signal: PortalSignal): Promise<void> {
    this.listeners.emit(signal);
    await this.db.query('SELECT pg_notify($1, $2)', [
      SIGNAL_CHANNEL,
      JSON.stringify({ schema: this.db.schema, origin: this.origin, signal }),
    ]);
  }

  watch(listener: (signal: PortalSignal) => void): () => void {
    this.stopListening ??= this.db.listen(SIGNAL_CHANNEL, (payload) => this.heard(payload));
    return this.listeners.add(listener);
  }

  private heard(payload: string): void {
    let message: { schema?: unknown; origin?: unknown; signal?: unknown };
    try {
      message = JSON.parse(payload) as typeof message;
    } catch {
      return;
    }
    if (message.schema !== this.db.schema || message.origin === this.origin) return;
    const signal = signalOf(message.signal);
    if (signal) this.listeners.emit(signal);
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
