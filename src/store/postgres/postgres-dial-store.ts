import {
  DIAL_CHANGE_COLUMNS,
  DialChange,
  DialRequest,
  dialRequestOf,
  DialRow,
  DialStore,
  NewDialRequest,
} from '../dial-store';
import { PostgresDatabase } from './postgres-database';

/**
 * Dial requests in PostgreSQL, shared by every replica: a claim is one statement that skips rows another
 * replica is claiming (`FOR UPDATE SKIP LOCKED`) and moves their `due_at` past the lease, so each pending
 * request is worked by one replica at a time.
 */
export class PostgresDialStore extends DialStore {
  constructor(private readonly db: PostgresDatabase) {
    super();
  }

  async add(request: NewDialRequest, now: number): Promise<boolean> {
    const rows = await this.db.query(
      `INSERT INTO dial_requests (portal_id, portal_call_id, kind, user_id, phone_number, crm_entity_type,
         crm_entity_id, line_number, clicked_at, deadline, state, attempts, due_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'pending', 0, $11, $11)
       ON CONFLICT (portal_id, portal_call_id) DO NOTHING
       RETURNING portal_call_id`,
      [
        request.portalId,
        request.portalCallId,
        request.kind,
        request.userId ?? null,
        request.phoneNumber,
        request.crmEntityType ?? null,
        request.crmEntityId ?? null,
        request.lineNumber ?? null,
        request.clickedAt,
        request.deadline,
        now,
      ],
    );
    return rows.length === 1;
  }

  async claim(portalId: string, now: number, leaseMs: number, limit: number): Promise<DialRequest[]> {
    await this.db.query(
      `UPDATE dial_requests SET state = 'sent', updated_at = $2,
         last_error = 'the bridge stopped during the originate: taken as sent'
       WHERE portal_id = $1 AND state = 'sending' AND due_at <= $2`,
      [portalId, now],
    );
    const rows = await this.db.query<DialRow>(
      `WITH due AS (
         SELECT portal_call_id FROM dial_requests
         WHERE portal_id = $1 AND state = 'pending' AND due_at <= $2
         ORDER BY due_at LIMIT $4 FOR UPDATE SKIP LOCKED)
       UPDATE dial_requests SET due_at = $3, updated_at = $2
       FROM due WHERE dial_requests.portal_id = $1 AND dial_requests.portal_call_id = due.portal_call_id
       RETURNING dial_requests.*`,
      [portalId, now, now + leaseMs, limit],
    );
    return rows.map(dialRequestOf);
  }

  async update(portalId: string, portalCallId: string, change: DialChange, now: number): Promise<void> {
    const keys = Object.keys(change) as (keyof DialChange)[];
    const sets = keys.map((key, index) => `${DIAL_CHANGE_COLUMNS[key]} = $${index + 4}`);
    await this.db.query(
      `UPDATE dial_requests SET ${[...sets, 'updated_at = $3'].join(', ')}
       WHERE portal_id = $1 AND portal_call_id = $2`,
      [portalId, portalCallId, now, ...keys.map((key) => change[key] ?? null)],
    );
  }

  async find(portalId: string, portalCallId: string): Promise<DialRequest | undefined> {
    const rows = await this.db.query<DialRow>(
      'SELECT * FROM dial_requests WHERE portal_id = $1 AND portal_call_id = $2',
      [portalId, portalCallId],
    );
    return rows[0] && dialRequestOf(rows[0]);
  }

  async nextDueAt(portalId: string): Promise<number | undefined> {
    const rows = await this.db.query<{ due: number | null }>(
      `SELECT MIN(due_at) AS due FROM dial_requests WHERE portal_id = $1 AND state IN ('pending', 'sending')`,
      [portalId],
    );
    return rows[0]?.due ?? undefined;
  }
}
