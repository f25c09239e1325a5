import { CallEvent, CallRecord, idempotencyKey } from '../calls/call';
import { deliveryPriority } from '../calls/call-lifecycle';
import { ClickLedger, ClickRow } from '../calls/click-ledger';
import { awaitingCallback } from '../calls/missed-call-task';
import { EventApplier, IngestResult } from './call-store';
import { callFromStored, callToStored } from './stored-call';

/**
 * How both engines store calls, clicks and event keys: the row mapping and the duplicate-dropping intake,
 * written once (the engines differ only in how they read and lock what intake needs).
 */

/** A `calls` row's columns besides its keys, kept from the record so the store can select on them. */
export interface CallColumns {
  portal_id: string;
  call_id: string;
  state: string;
  next_step: string | null;
  due_at: number | null;
  created_at: number;
  updated_at: number;
  data: string;
  priority: number;
  callback_phone: string | null;
  callback_until: number | null;
}

export function callColumnsOf(call: CallRecord): CallColumns {
  const callback = awaitingCallback(call);
  return {
    portal_id: call.portalId,
    call_id: call.callId,
    state: call.delivery.state,
    next_step: call.delivery.nextStep ?? null,
    due_at: call.delivery.dueAt ?? null,
    created_at: call.createdAt,
    updated_at: call.updatedAt,
    data: callToStored(call),
    priority: deliveryPriority(call),
    callback_phone: callback?.phone ?? null,
    callback_until: callback?.until ?? null,
  };
}

/** The upsert of one call, in either engine (placeholders from `value`, in column order). */
export const UPSERT_CALL_COLUMNS = `(portal_id, call_id, state, next_step, due_at, created_at, updated_at, data, priority,
  callback_phone, callback_until)`;
export const ON_CALL_CONFLICT = `ON CONFLICT (portal_id, call_id) DO UPDATE SET state = excluded.state,
  next_step = excluded.next_step, due_at = excluded.due_at, updated_at = excluded.updated_at, data = excluded.data,
  priority = excluded.priority, callback_phone = excluded.callback_phone, callback_until = excluded.callback_until`;

/** The call in a row, as its parts (`callFromStored`; the row keeps the flat shape every release reads). */
export function callOf(row: { data: string }): CallRecord {
  return callFromStored(row.data);
}

/** A `clicks` row as either engine returns it. */
export interface ClickDbRow {
  portal_call_id: string;
  user_id: string | number | null;
  phone_number: string | null;
  clicked_at: string | number | null;
  matched_call_id: string | null;
}

export const CLICK_COLUMNS = 'portal_call_id, user_id, phone_number, clicked_at, matched_call_id';

/** Numbers may arrive as text (a bigint read through JSON): read as numbers either way. */
export function clickOf(row: ClickDbRow): ClickRow {
  return {
    portalCallId: row.portal_call_id,
    userId: row.user_id === null ? undefined : Number(row.user_id),
    phoneNumber: row.phone_number ?? undefined,
    clickedAt: row.clicked_at === null ? undefined : Number(row.clicked_at),
    matchedCallId: row.matched_call_id ?? undefined,
  };
}

/** An event key of a call, as a set member. */
export function eventKey(callId: string, event: string): string {
  return `${event}\u001f${callId}`;
}

/** What intake read for one portal, locked until its commit: stored event keys, calls, matching clicks. */
export interface IntakeRead {
  /** `eventKey`s stored for the batch's calls. */
  known: Set<string>;
  calls: Map<string, CallRecord>;
  clicks: ClickLedger;
}

/** What one portal's intake decided: the answers, the new event keys and the calls they changed. */
export interface IntakeOutcome {
  results: IngestResult[];
  fresh: { event: CallEvent; key: string }[];
  changed: CallRecord[];
}

/**
 * The duplicate-dropping intake: each event not seen before under its `(callId, key)` is applied to its
 * call, one after the other (the key may depend on the call as it stands: a later call.started naming new
 * phones); a key stored before or earlier in this batch is a duplicate. `read` is updated as it goes.
 */
export function takeEvents(submissions: CallEvent[][], apply: EventApplier, read: IntakeRead): IntakeOutcome {
  const { known, calls, clicks } = read;
  const changed = new Map<string, CallRecord>();
  const fresh: IntakeOutcome['fresh'] = [];
  const results = submissions.map((list) => {
    const result: IngestResult = { accepted: 0, duplicates: 0 };
    for (const event of list) {
      const key = idempotencyKey(event, calls.get(event.callId));
      if (known.has(eventKey(event.callId, key))) {
        result.duplicates += 1;
        continue;
      }
      known.add(eventKey(event.callId, key));
      fresh.push({ event, key });
      result.accepted += 1;
      const call = apply(calls.get(event.callId), event, clicks);
      calls.set(event.callId, call);
      changed.set(event.callId, call);
    }
    return result;
  });
  return { results, fresh, changed: [...changed.values()] };
}
