import { DialChange, DialRequest, DialStore, NewDialRequest } from '../dial-store';

/** Dial requests in memory: for unit specs and tools; the same rules as the SQL stores. */
export class MemoryDialStore extends DialStore {
  private readonly rows = new Map<string, DialRequest>();

  private key(portalId: string, portalCallId: string): string {
    return `${portalId}\u0000${portalCallId}`;
  }

  async add(request: NewDialRequest, now: number): Promise<boolean> {
    const key = this.key(request.portalId, request.portalCallId);
    if (this.rows.has(key)) return false;
    this.rows.set(key, { ...request, state: 'pending', attempts: 0, dueAt: now, updatedAt: now });
    return true;
  }

  async claim(portalId: string, now: number, leaseMs: number, limit: number): Promise<DialRequest[]> {
    const mine = [...this.rows.values()].filter((row) => row.portalId === portalId && row.dueAt <= now);
    for (const row of mine.filter((row) => row.state === 'sending')) {
      Object.assign(row, {
        state: 'sent',
        updatedAt: now,
        lastError: 'the bridge stopped during the originate: taken as sent',
      });
    }
    const due = mine
      .filter((row) => row.state === 'pending')
      .sort((a, b) => a.dueAt - b.dueAt)
      .slice(0, limit);
    for (const row of due) Object.assign(row, { dueAt: now + leaseMs, updatedAt: now });
    return due.map((row) => ({ ...row }));
  }

  async update(portalId: string, portalCallId: string, change: DialChange, now: number): Promise<void> {
    const row = this.rows.get(this.key(portalId, portalCallId));
    if (row) Object.assign(row, change, { updatedAt: now });
  }

  async find(portalId: string, portalCallId: string): Promise<DialRequest | undefined> {
    const row = this.rows.get(this.key(portalId, portalCallId));
    return row && { ...row };
  }

  async nextDueAt(portalId: string): Promise<number | undefined> {
    const due = [...this.rows.values()]
      .filter((row) => row.portalId === portalId && (row.state === 'pending' || row.state === 'sending'))
      .map((row) => row.dueAt);
    return due.length ? Math.min(...due) : undefined;
  }
}
