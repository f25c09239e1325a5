/** What health details and metrics show of a follower; never a secret. */
export interface FollowStatusView {
  source: 'ami' | 'esl';
  /** The PBX address without credentials (`tcp://host:5038`). */
  target: string;
  /** false while this replica does not hold the portal's delivery lease (another replica follows). */
  followingHere: boolean;
  connected: boolean;
  since: string | null;
  /** The last connection error (address and reason, no credentials). */
  lastError: string | null;
  /** PBX events read per second over the last 10 s. */
  eventsPerSec: number;
  /** Calls followed since this process started (live or over). */
  callsFollowed: number;
  /** Calls followed now: their outside party is still on the line. */
  callsLive: number;
  callEvents: number;
  /** Calls followed before a disconnect whose end was never seen (no ledger yet): their call.ended is missing. */
  possiblyLost: number;
  /** Channels created and gone while disconnected (Uniqueid counter gaps): calls among them are unknown. */
  unseenChannels: number;
  reconnects: number;
}

/** The CDR ledger (ASTERISK_CDR_URL) in health details; never a secret. */
export interface LedgerStatusView {
  source: 'asterisk-cdr';
  /** The database without credentials (`mysql://host:3306/asteriskcdrdb`). */
  target: string;
  /** false while this replica does not hold the portal's delivery lease (another replica reads). */
  readingHere: boolean;
  connected: boolean;
  lastError: string | null;
  /** Rows whose leg ended before this (the PBX's local time) are all read; stored durably. */
  position: string | null;
  lagSec: number | null;
  rowsRead: number;
  /** Calls the ledger delivered because no followed or posted event had ended them. */
  callsTaken: number;
  /** Calls whose rows are read, waiting for their last legs (a grace period of quiet). */
  callsPending: number;
}

/** What health details show: the followed connection (if any) and the ledger (if any). */
export type FollowHealthView =
  | (FollowStatusView & { ledger?: LedgerStatusView; possiblyLostResolvedBy?: 'ledger' })
  | { source: 'ledger'; ledger: LedgerStatusView };

/** When calls were answered, as the portal's store has them (ms by callId): see `stored-answers.ts`. */
export type AnsweredAtLookup = (callIds: string[]) => Promise<ReadonlyMap<string, number>>;

/**
 * The stored answer times of `callIds`, or none when the store does not answer within `timeoutMs` (a resync
 * must not wait on a slow database: it then times the answers from the PBX instead).
 */
export async function storedAnswersWithin(
  lookup: AnsweredAtLookup | undefined,
  callIds: string[],
  timeoutMs: number,
  warn: (message: string) => void,
): Promise<ReadonlyMap<string, number>> {
  if (!lookup || callIds.length === 0) return new Map();
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      lookup(callIds),
      new Promise<ReadonlyMap<string, number>>((resolve) => {
        timer = setTimeout(() => resolve(new Map()), timeoutMs);
      }),
    ]);
  } catch (error) {
    warn(`stored answer times unavailable: ${(error as Error).message}`);
    return new Map();
  } finally {
    clearTimeout(timer);
  }
}

export abstract class PbxFollower {
  abstract status(): FollowHealthView;
}
