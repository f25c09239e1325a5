/**
 * Click-to-call dial requests (SPEC.md §6), stored durably when a click arrives and worked by the dialer in
 * the background. One row per portal CALL_ID: storing the same click again changes nothing.
 *
 * States: `pending` (to originate, at `dueAt` or later), `sending` (the originate was started: after a crash
 * it is taken as sent, so a click dials at most once), `sent` (the PBX took it), `failed` (never dialled;
 * the portal's call was finished as failed).
 */
export type DialState = 'pending' | 'sending' | 'sent' | 'failed';

export interface NewDialRequest {
  portalId: string;
  portalCallId: string;
  kind: 'click' | 'callback';
  userId?: number;
  phoneNumber: string;
  crmEntityType?: string;
  crmEntityId?: number;
  lineNumber?: string;
  /** ms epoch of the click. */
  clickedAt: number;
  /** ms epoch after which the PBX is no longer asked: clickedAt + DIAL_TIMEOUT_SEC. */
  deadline: number;
}

export interface DialRequest extends NewDialRequest {
  /** The employee's internal number, once resolved. */
  extension?: string;
  state: DialState;
  attempts: number;
  lastError?: string;
  /** pending: not before this (ms epoch); claimed or sending: until this the claim holds. */
  dueAt: number;
  updatedAt: number;
}

export type DialChange = Partial<
  Pick<DialRequest, 'state' | 'attempts' | 'lastError' | 'dueAt' | 'extension' | 'userId'>
>;

export abstract class DialStore {
  /** Stores a new request (state pending, due at once); false when one with its CALL_ID is already there. */
  abstract add(request: NewDialRequest, now: number): Promise<boolean>;

  /**
   * Takes up to `limit` due pending requests for `leaseMs` (no other replica gets them meanwhile), and first
   * settles `sending` requests whose claim ran out (a crash between start and end of an originate) as sent.
   */
  abstract claim(portalId: string, now: number, leaseMs: number, limit: number): Promise<DialRequest[]>;

  /** Changes a request. */
  abstract update(portalId: string, portalCallId: string, change: DialChange, now: number): Promise<void>;

  abstract find(portalId: string, portalCallId: string): Promise<DialRequest | undefined>;

  /** The earliest dueAt of a pending request, for the worker's sleep. */
  abstract nextDueAt(portalId: string): Promise<number | undefined>;
}

/** The row both SQL stores read (snake_case columns, ms epochs as numbers). */
export interface DialRow {
  portal_id: string;
  portal_call_id: string;
  kind: string;
  user_id: number | null;
  extension: string | null;
  phone_number: string;
  crm_entity_type: string | null;
  crm_entity_id: number | null;
  line_number: string | null;
  clicked_at: number;
  deadline: number;
  state: string;
  attempts: number;
  last_error: string | null;
  due_at: number;
  updated_at: number;
}

export function dialRequestOf(row: DialRow): DialRequest {
  return {
    portalId: row.portal_id,
    portalCallId: row.portal_call_id,
    kind: row.kind as DialRequest['kind'],
    userId: row.user_id ?? undefined,
    extension: row.extension ?? undefined,
    phoneNumber: row.phone_number,
    crmEntityType: row.crm_entity_type ?? undefined,
    crmEntityId: row.crm_entity_id ?? undefined,
    lineNumber: row.line_number ?? undefined,
    clickedAt: row.clicked_at,
    deadline: row.deadline,
    state: row.state as DialState,
    attempts: row.attempts,
    lastError: row.last_error ?? undefined,
    dueAt: row.due_at,
    updatedAt: row.updated_at,
  };
}

/** Column ← change field, for the SQL stores' UPDATE. */
export const DIAL_CHANGE_COLUMNS: Record<keyof DialChange, string> = {
  state: 'state',
  attempts: 'attempts',
  lastError: 'last_error',
  dueAt: 'due_at',
  extension: 'extension',
  userId: 'user_id',
};
