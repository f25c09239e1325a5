import { PoolClient } from 'pg';
import { CallRecord } from '../../calls/call';
import { callColumnsOf } from '../call-rows';
import { CommitNotices, TransactionOptions } from './postgres-database';

/** NOTIFY channel on which a replica that stored work tells the others (payload: schema, portal id). */
export const NEW_WORK_CHANNEL = 'bridge_new_work';

/**
 * Whatever the server's or role's default, `synchronous_commit = on`: intake's 202 (events, a pushed
 * recording, the callbacks its answered calls end) promises what it stored survives a database crash.
 */
export const DURABLE: TransactionOptions = { synchronousCommit: true };

export function workPayload(schema: string, portalId: string): string {
  return `${schema}\u001f${portalId}`;
}

/**
 * Tells every replica's listener, once this transaction commits (PostgreSQL delivers a NOTIFY only then,
 * and one per payload however often it is sent), that calls of the portal are due.
 */
export function announceWork(
  atCommit: CommitNotices,
  schema: string,
  portalId: string,
  calls: CallRecord[],
): void {
  if (!calls.some((call) => call.delivery.dueAt !== undefined)) return;
  // Sent with the COMMIT, in its round trip.
  atCommit.notify(NEW_WORK_CHANNEL, workPayload(schema, portalId));
}

export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

export function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Intake's new event keys, stored with their calls (`saveCalls`). */
export interface NewEvents {
  portalIds: string[];
  callIds: string[];
  keys: string[];
  payloads: string[];
  receivedAt: number;
}

const CALL_COLUMN_NAMES = [
  'portal_id',
  'call_id',
  'state',
  'next_step',
  'due_at',
  'created_at',
  'updated_at',
  'data',
  'priority',
  'callback_phone',
  'callback_until',
] as const;

/** The columns of `calls`, each as an array with one element per call, for `unnest`. */
export function callArrays(calls: readonly CallRecord[]): unknown[][] {
  const rows = calls.map(callColumnsOf);
  return CALL_COLUMN_NAMES.map((name) => rows.map((row) => row[name]));
}

/**
 * Upserts `calls`; with `events` (intake), their new event keys are inserted by the same statement (a
 * data-modifying CTE: one round trip, and a key stored twice still fails the whole statement).
 */
export async function saveCalls(client: PoolClient, calls: CallRecord[], events?: NewEvents): Promise<void> {
  if (!calls.length) return;
  await client.query({
    name: events ? 'save-calls-events' : 'save-calls',
    text: `${
      events
        ? `WITH stored_events AS (
             INSERT INTO call_events (portal_id, call_id, event, payload, received_at)
             SELECT e.portal_id, e.call_id, e.event, e.payload, $16
             FROM unnest($12::text[], $13::text[], $14::text[], $15::text[]) AS e(portal_id, call_id, event, payload)
           ) `
        : ''
    }INSERT INTO calls (portal_id, call_id, state, next_step, due_at, created_at, updated_at, data, priority,
       callback_phone, callback_until)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[],
       $7::bigint[], $8::text[], $9::smallint[], $10::text[], $11::bigint[])
     ON CONFLICT (portal_id, call_id) DO UPDATE SET state = excluded.state, next_step = excluded.next_step,
       due_at = excluded.due_at, updated_at = excluded.updated_at, data = excluded.data,
       priority = excluded.priority, callback_phone = excluded.callback_phone,
       callback_until = excluded.callback_until`,
    values: [
      ...callArrays(calls),
      ...(events ? [events.portalIds, events.callIds, events.keys, events.payloads, events.receivedAt] : []),
    ],
  });
}
