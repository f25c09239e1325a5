import {
  NewPortalEvent,
  PortalEventStore,
  PortalSignal,
  SignalListeners,
  StoredPortalEvent,
} from '../portal-event-store';

/** Portal events in memory, for specs. */
export class MemoryPortalEventStore extends PortalEventStore {
  private rows: StoredPortalEvent[] = [];
  private lastId = 0;
  private readonly listeners = new SignalListeners();

  constructor(private readonly now: () => number = Date.now) {
    super();
  }

  async publish(signal: PortalSignal): Promise<void> {
    this.listeners.emit(signal);
  }

  watch(listener: (signal: PortalSignal) => void): () => void {
    return this.listeners.add(listener);
  }

  async add(event: NewPortalEvent): Promise<{ id: number; duplicate: boolean }> {
    const existing = this.rows.find(
      (row) => row.portalId === event.portalId && row.dedupeKey === event.dedupeKey,
    );
    if (existing) return { id: existing.id, duplicate: true };
    const id = ++this.lastId;
    this.rows.push({ ...event, id, state: 'pending', attempts: 0, dueAt: event.receivedAt });
    return { id, duplicate: false };
  }

  async claimDue(portalId: string, leaseMs: number, limit: number): Promise<StoredPortalEvent[]> {
    const now = this.now();
    const due = this.rows
      .filter((row) => row.portalId === portalId && row.state === 'pending' && (row.dueAt ?? 0) <= now)
      .slice(0, limit);
    for (const row of due) {
      row.dueAt = now + leaseMs;
      row.attempts += 1;
    }
    return due.map((row) => ({ ...row }));
  }

  async settle(id: number, state: 'processed' | 'ignored', note?: string): Promise<void> {
    const row = this.rows.find((candidate) => candidate.id === id);
    if (!row) return;
    Object.assign(row, { state, dueAt: null, settledAt: this.now(), lastError: note ?? row.lastError });
  }

  async retry(id: number, delayMs: number, error: string): Promise<void> {
    const row = this.rows.find((candidate) => candidate.id === id);
    if (row && row.state === 'pending') Object.assign(row, { dueAt: this.now() + delayMs, lastError: error });
  }

  async list(portalId: string, limit: number): Promise<StoredPortalEvent[]> {
    return this.rows
      .filter((row) => row.portalId === portalId)
      .reverse()
      .slice(0, limit)
      .map((row) => ({ ...row }));
  }

  async deleteSettled(before: number, limit: number): Promise<number> {
    const old = this.rows
      .filter((row) => row.state !== 'pending' && row.settledAt !== undefined && row.settledAt < before)
      .slice(0, limit);
    this.rows = this.rows.filter((row) => !old.includes(row));
    return old.length;
  }
}
