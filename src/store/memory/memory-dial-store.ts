import { DialRequest, DialStore, FencedDialChange, NewDialRequest, SETTLED_DIAL_STATES } from '../dial-store';
import { fenceHolds } from '../fence';

/** Dial requests in memory: for unit specs and tools; the same rules as the SQL stores, on `now`'s clock. */
export class MemoryDialStore extends DialStore {
  private readonly rows = new Map<string, DialRequest>();

  constructor(private readonly now: () => number = Date.now) {
    super();
  }

  private key(portalId: string, portalCallId: string): string {
    return `${portalId}\u0000${portalCallId}`;
  }

  async add(request: NewDialRequest): Promise<boolean> {
    const key = this.key(request.portalId, request.portalCallId);
    if (this.rows.has(key)) return false;
    const now = this.now();
    this.rows.set(key, { ...request, state: 'pending', attempts: 0, dueAt: now, updatedAt: now });
    return true;
  }

  async claim(portalId: string, owner: string, leaseMs: number, limit: number): Promise<DialRequest[]> {
    const now = this.now();
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
    for (const row of due) {
      const claim = { owner, epoch: (row.claim?.epoch ?? 0) + 1 };
      Object.assign(row, { dueAt: now + leaseMs, updatedAt: now, claim });
    }
    return due.map((row) => ({ ...row }));
  }

  async update(portalId: string, portalCallId: string, fenced: FencedDialChange): Promise<boolean> {
    const row = this.rows.get(this.key(portalId, portalCallId));
    if (!row || !fenceHolds(row.claim, fenced.claim) || !fenced.from.includes(row.state)) return false;
    const { dueInMs, ...change } = fenced.change;
    const now = this.now();
    Object.assign(row, change, { updatedAt: now }, dueInMs === undefined ? {} : { dueAt: now + dueInMs });
    return true;
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

  async deleteSettled(before: number, limit: number): Promise<number> {
    const old = [...this.rows.entries()]
      .filter(([, row]) => SETTLED_DIAL_STATES.includes(row.state) && row.updatedAt < before)
      .slice(0, limit);
    for (const [key] of old) this.rows.delete(key);
    return old.length;
  }
}
