import { PortalEventState, StoredPortalEvent } from './portal-event-store';

/** A `portal_events` row as both engines return it (PostgreSQL bigints may come back as strings). */
export interface PortalEventRow {
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

export function fromPortalEventRow(row: PortalEventRow): StoredPortalEvent {
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
