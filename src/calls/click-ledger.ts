import { CallEvent } from './call';
import { ClickClaims, StoredClick } from './click-match';

/** A click as stored (the `clicks` table): what the click registry saves, before any call takes it. */
export type ClickRow = StoredClick;

/** Which click rows an intake batch may touch: its events' CALL_IDs and numbers. */
export function clickKeysOf(events: readonly CallEvent[]): { portalCallIds: string[]; phones: string[] } {
  const portalCallIds = new Set<string>();
  const phones = new Set<string>();
  for (const event of events) {
    if (event.crmCallId) portalCallIds.add(event.crmCallId);
    if (event.phoneNumber) phones.add(event.phoneNumber);
  }
  return { portalCallIds: [...portalCallIds].sort(), phones: [...phones].sort() };
}

/**
 * The click rows an intake transaction read (locked, in the SQL stores), lent to the lifecycle as
 * `ClickClaims`; the rows it claims are written back in the same transaction (`changed`).
 */
export class ClickLedger implements ClickClaims {
  private readonly rows = new Map<string, StoredClick>();
  private readonly touched = new Set<string>();

  constructor(rows: readonly ClickRow[]) {
    for (const row of rows) this.rows.set(row.portalCallId, { ...row });
  }

  claim(portalCallId: string, callId: string): { holder: string; userId?: number } {
    const row = this.rows.get(portalCallId);
    if (row?.matchedCallId !== undefined) return { holder: row.matchedCallId, userId: row.userId };
    this.rows.set(portalCallId, { ...(row ?? { portalCallId }), matchedCallId: callId });
    this.touched.add(portalCallId);
    return { holder: callId, userId: row?.userId };
  }

  openClicks(phoneNumber: string): StoredClick[] {
    return [...this.rows.values()]
      .filter((row) => row.matchedCallId === undefined && row.phoneNumber === phoneNumber)
      .map((row) => ({ ...row }));
  }

  /** Rows claimed in this transaction, to be written (a row unknown before is inserted without click data). */
  get changed(): StoredClick[] {
    return [...this.touched].map((id) => this.rows.get(id)!);
  }
}
