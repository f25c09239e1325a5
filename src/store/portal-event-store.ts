/**
 * The portal's event posts (docs/API.md), stored before the bridge answers the portal and handled by the
 * portal-events processor. Only `event`, `data` and `ts` are kept: the `auth[…]` fields (the application
 * token, access tokens) never reach the store.
 */

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

/**
 * What one replica learnt from a portal event that every process on the database must act on at once
 * (docs/decisions/portal-events.md): an uninstall pauses the portal everywhere, a CRM change drops the
 * cached lookups of every replica, not only of the one that handled it.
 */
export type PortalSignal =
  | { portalId: string; kind: 'uninstalled' }
  | { portalId: string; kind: 'crm-changed'; entityType: string; entityId: number };

/** The listeners of one process: a published signal reaches them at once, before any other process. */
export class SignalListeners {
  private readonly listeners = new Set<(signal: PortalSignal) => void>();

  get size(): number {
    return this.listeners.size;
  }

  add(listener: (signal: PortalSignal) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(signal: PortalSignal): void {
    for (const listener of this.listeners) listener(signal);
  }
}

/** A signal read back from its stored or notified form; undefined when it is not one. */
export function signalOf(value: unknown): PortalSignal | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { portalId, kind, entityType, entityId } = value as Record<string, unknown>;
  if (typeof portalId !== 'string') return undefined;
  if (kind === 'uninstalled') return { portalId, kind };
  if (kind === 'crm-changed' && typeof entityType === 'string' && typeof entityId === 'number') {
    return { portalId, kind, entityType, entityId };
  }
  return undefined;
}

export abstract class PortalEventStore {
  /**
   * Tells every process on this database of `signal`: this process's listeners before it resolves, the
   * other processes' as soon as the engine carries it (PostgreSQL NOTIFY; SQLite: their next look).
   */
  abstract publish(signal: PortalSignal): Promise<void>;

  /** Calls `listener` with every signal any process publishes (this one's included); returns the stop. */
  abstract watch(listener: (signal: PortalSignal) => void): () => void;

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
