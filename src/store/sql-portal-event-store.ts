import { RawSql, SKIP_LOCKED, sqlOf, SqlRunner, SqlTag } from './fence';
import { NewPortalEvent, PortalEventState, PortalEventStore, StoredPortalEvent } from './portal-event-store';

/** A `portal_events` row as both engines return it (PostgreSQL bigints may come back as strings). */
interface PortalEventRow {
  id: number | string;
  portal_id: string;
  dedupe_key: string;
  event: string;
  payload: string;
  received_at: number | string;
  state: string;
  attempts: number | string;
  due_at: number | string | null;
  last_error: string | null;
  settled_at: number | string | null;
}

function fromPortalEventRow(row: PortalEventRow): StoredPortalEvent {
  return {
    id: Number(row.id),
    portalId: row.portal_id,
    dedupeKey: row.dedupe_key,
    event: row.event,
    payload: row.payload,
    receivedAt: Number(row.received_at),
    state: row.state as PortalEventState,
    attempts: Number(row.attempts),
    dueAt: row.due_at === null ? null : Number(row.due_at),
    lastError: row.last_error ?? undefined,
    settledAt: row.settled_at === null ? undefined : Number(row.settled_at),
  };
}

/**
 * Portal events in either engine's database. A claim moves the due rows' `due_at` past the lease in one
 * UPDATE … RETURNING, skipping rows another replica is claiming (PostgreSQL `FOR UPDATE SKIP LOCKED`;
 * SQLite's writes are serial), so processes claiming at once get different events. How a signal reaches
 * the other processes is each engine's own.
 */
export abstract class SqlPortalEventStore extends PortalEventStore {
  private readonly sql: SqlTag;

  /**
   * `clock`: the time leases and settlements are stamped with, read at each statement: the database's
   * clock (PostgreSQL, shared by replicas on several machines) or the host's in ms (SQLite).
   */
  constructor(
    protected readonly db: SqlRunner,
    private readonly clock: () => RawSql | number,
  ) {
    super();
    this.sql = sqlOf(db.dialect);
  }

  async add(event: NewPortalEvent): Promise<{ id: number; duplicate: boolean }> {
    const [inserted] = await this.db.all<{ id: number | string }>(
      this
        .sql`INSERT INTO portal_events (portal_id, dedupe_key, event, payload, received_at, state, attempts, due_at)
       VALUES (${event.portalId}, ${event.dedupeKey}, ${event.event}, ${event.payload}, ${event.receivedAt},
         'pending', 0, ${event.receivedAt})
       ON CONFLICT (portal_id, dedupe_key) DO NOTHING RETURNING id`,
    );
    if (inserted) return { id: Number(inserted.id), duplicate: false };
    const [existing] = await this.db.all<{ id: number | string }>(
      this
        .sql`SELECT id FROM portal_events WHERE portal_id = ${event.portalId} AND dedupe_key = ${event.dedupeKey}`,
    );
    return { id: Number(existing?.id), duplicate: true };
  }

  async claimDue(portalId: string, leaseMs: number, limit: number): Promise<StoredPortalEvent[]> {
    const now = this.clock();
    const rows = await this.db.all<PortalEventRow>(
      this.sql`UPDATE portal_events SET due_at = ${now} + ${leaseMs}, attempts = attempts + 1
       WHERE id IN (SELECT id FROM portal_events
                    WHERE portal_id = ${portalId} AND state = 'pending' AND due_at <= ${now}
                    ORDER BY id LIMIT ${limit}${SKIP_LOCKED})
       RETURNING *`,
    );
    return rows.map(fromPortalEventRow).sort((a, b) => a.id - b.id);
  }

  async settle(id: number, state: 'processed' | 'ignored', note?: string): Promise<void> {
    await this.db.all(
      this.sql`UPDATE portal_events SET state = ${state}, due_at = NULL, settled_at = ${this.clock()},
         last_error = COALESCE(${note}, last_error)
       WHERE id = ${id} AND state = 'pending'`,
    );
  }

  async retry(id: number, delayMs: number, error: string): Promise<void> {
    await this.db.all(
      this.sql`UPDATE portal_events SET due_at = ${this.clock()} + ${delayMs}, last_error = ${error}
       WHERE id = ${id} AND state = 'pending'`,
    );
  }

  async list(portalId: string, limit: number): Promise<StoredPortalEvent[]> {
    const rows = await this.db.all<PortalEventRow>(
      this.sql`SELECT * FROM portal_events WHERE portal_id = ${portalId} ORDER BY id DESC LIMIT ${limit}`,
    );
    return rows.map(fromPortalEventRow);
  }

  /** Retention, a batch at a time; pending events are never deleted, rows another transaction holds wait. */
  async deleteSettled(before: number, limit: number): Promise<number> {
    const rows = await this.db.all(
      this.sql`DELETE FROM portal_events WHERE id IN (
         SELECT id FROM portal_events WHERE state <> 'pending' AND settled_at < ${before}
         ORDER BY settled_at LIMIT ${limit}${SKIP_LOCKED})
       RETURNING id`,
    );
    return rows.length;
  }
}
