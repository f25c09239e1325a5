/**
 * The portal's event posts (SPEC.md §6), stored before the bridge answers the portal and handled by the
 * portal-events processor. Only `event`, `data` and `ts` are kept: the `auth[…]` fields (the application
 * token, access tokens) never reach the store.
 */

import { SqlDialect, Statement, StatementBuilder } from './fence';

/** `pending` until handled; `processed` when handled; `ignored` when nothing was to be done (counted). */
export type PortalEventState = 'pending' | 'processed' | 'ignored';

export interface NewPortalEvent {
  portalId: string;
  /** The same post twice (same event, data and ts) is stored once. */
  dedupeKey: string;
  event: string;
  /** JSON of `{ data, ts }`. */
  payload: string;
  receivedAt: number;
}

export interface StoredPortalEvent extends NewPortalEvent {
  id: number;
  state: PortalEventState;
  /** Times a processor claimed it. */
  attempts: number;
  /** When a processor may claim it (again); null once settled. */
  dueAt: number | null;
  lastError?: string;
  settledAt?: number;
}

export abstract class PortalEventStore {
  /** Stores a post durably; `duplicate` when the same post was stored before (nothing new stored). */
  abstract add(event: NewPortalEvent): Promise<{ id: number; duplicate: boolean }>;

  /**
   * Claims up to `limit` pending events that are due, oldest first, for `leaseMs`: until then no other
   * processor (replica) claims them; a processor that dies leaves them to be claimed again afterwards.
   */
  abstract claimDue(portalId: string, leaseMs: number, limit: number): Promise<StoredPortalEvent[]>;

  /** Handled (or nothing to do): the event is never claimed again. */
  abstract settle(id: number, state: 'processed' | 'ignored', note?: string): Promise<void>;

  /** A handler failed: claimed again after `delayMs`, the error kept. */
  abstract retry(id: number, delayMs: number, error: string): Promise<void>;

  /** The newest events first, for operators and tests. */
  abstract list(portalId: string, limit: number): Promise<StoredPortalEvent[]>;

  /** Retention: deletes up to `limit` handled or ignored events settled before `before` (ms epoch). */
  abstract deleteSettled(before: number, limit: number): Promise<number>;
}

/** The portal-event statements both SQL engines share (docs/decisions/dialer-fencing.md). */
export const portalEventStatements = {
  /** Retention, a batch at a time; pending events are never deleted, rows another transaction holds wait. */
  deleteSettled(dialect: SqlDialect, before: number, limit: number): Statement {
    const q = new StatementBuilder(dialect);
    return q.build(
      `DELETE FROM portal_events WHERE id IN (
         SELECT id FROM portal_events
         WHERE state <> 'pending' AND settled_at < ${q.value(before)}
         ORDER BY settled_at LIMIT ${q.value(limit)}${dialect.skipLocked})
       RETURNING id`,
    );
  },
};
