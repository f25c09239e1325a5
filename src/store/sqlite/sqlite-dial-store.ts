import Database from 'better-sqlite3';
import {
  DIAL_CHANGE_COLUMNS,
  DialChange,
  DialRequest,
  dialRequestOf,
  DialRow,
  DialStore,
  NewDialRequest,
} from '../dial-store';
import { SqliteDatabase } from './sqlite-database';

/** Dial requests in the bridge's SQLite file; each method one short synchronous transaction. */
export class SqliteDialStore extends DialStore {
  private readonly db: Database.Database;

  constructor(database: SqliteDatabase) {
    super();
    this.db = database.connection;
  }

  async add(request: NewDialRequest, now: number): Promise<boolean> {
    const result = this.db
      .prepare(
        `INSERT INTO dial_requests (portal_id, portal_call_id, kind, user_id, phone_number, crm_entity_type,
           crm_entity_id, line_number, clicked_at, deadline, state, attempts, due_at, updated_at)
         VALUES (@portalId, @portalCallId, @kind, @userId, @phoneNumber, @crmEntityType, @crmEntityId,
           @lineNumber, @clickedAt, @deadline, 'pending', 0, @now, @now)
         ON CONFLICT (portal_id, portal_call_id) DO NOTHING`,
      )
      .run({
        portalId: request.portalId,
        portalCallId: request.portalCallId,
        kind: request.kind,
        userId: request.userId ?? null,
        phoneNumber: request.phoneNumber,
        crmEntityType: request.crmEntityType ?? null,
        crmEntityId: request.crmEntityId ?? null,
        lineNumber: request.lineNumber ?? null,
        clickedAt: request.clickedAt,
        deadline: request.deadline,
        now,
      });
    return result.changes === 1;
  }

  async claim(portalId: string, now: number, leaseMs: number, limit: number): Promise<DialRequest[]> {
    return this.db.transaction(() => {
      this.db
        .prepare(
          `UPDATE dial_requests SET state = 'sent', updated_at = @now,
             last_error = 'the bridge stopped during the originate: taken as sent'
           WHERE portal_id = @portalId AND state = 'sending' AND due_at <= @now`,
        )
        .run({ portalId, now });
      const rows = this.db
        .prepare(
          `UPDATE dial_requests SET due_at = @until, updated_at = @now
           WHERE portal_id = @portalId AND portal_call_id IN (
             SELECT portal_call_id FROM dial_requests
             WHERE portal_id = @portalId AND state = 'pending' AND due_at <= @now
             ORDER BY due_at LIMIT @limit)
           RETURNING *`,
        )
        .all({ portalId, now, until: now + leaseMs, limit }) as DialRow[];
      return rows.map(dialRequestOf);
    })();
  }

  async update(portalId: string, portalCallId: string, change: DialChange, now: number): Promise<void> {
    const keys = Object.keys(change) as (keyof DialChange)[];
    const sets = keys.map((key) => `${DIAL_CHANGE_COLUMNS[key]} = @${key}`);
    const values = Object.fromEntries(keys.map((key) => [key, change[key] ?? null]));
    this.db
      .prepare(
        `UPDATE dial_requests SET ${[...sets, 'updated_at = @now'].join(', ')}
         WHERE portal_id = @portalId AND portal_call_id = @portalCallId`,
      )
      .run({ ...values, now, portalId, portalCallId });
  }

  async find(portalId: string, portalCallId: string): Promise<DialRequest | undefined> {
    const row = this.db
      .prepare('SELECT * FROM dial_requests WHERE portal_id = ? AND portal_call_id = ?')
      .get(portalId, portalCallId) as DialRow | undefined;
    return row && dialRequestOf(row);
  }

  async nextDueAt(portalId: string): Promise<number | undefined> {
    const row = this.db
      .prepare(
        `SELECT MIN(due_at) AS due FROM dial_requests WHERE portal_id = ? AND state IN ('pending', 'sending')`,
      )
      .get(portalId) as { due: number | null };
    return row.due ?? undefined;
  }
}
