import { LRUCache } from 'lru-cache';
import { CrmMatch } from './crm-match';

export interface LookupCacheSettings {
  /** Most numbers held; the least recently used go first. */
  maxEntries: number;
  /** How long a match is served without asking the portal. */
  ttlMs: number;
  /** How long "no match" is served: shorter, since registering a call from an unknown number creates a lead. */
  missTtlMs: number;
  /** How long past that an answer is still served when the portal cannot be asked. */
  staleMs: number;
}

export interface CachedLookup {
  match: CrmMatch | null;
  /** False: expired, to be served only when the portal fails. */
  fresh: boolean;
}

interface Entry {
  match: CrmMatch | null;
  freshUntil: number;
}

/**
 * Lookup answers by E.164 number, bounded in size. An entry is fresh for its TTL, then kept for the stale
 * window in case the portal fails, then dropped.
 */
export class LookupCache {
  private readonly entries: LRUCache<string, Entry>;

  constructor(
    private readonly settings: LookupCacheSettings,
    private readonly now: () => number = Date.now,
  ) {
    this.entries = new LRUCache<string, Entry>({
      // Bounded by count through maxSize, not max: max preallocates its arrays for maxEntries in every
      // portal's cache, used or not (ten thousand idle portals); this one grows with what it holds.
      maxSize: settings.maxEntries,
      sizeCalculation: () => 1,
      ttl: Math.max(settings.ttlMs, settings.missTtlMs) + settings.staleMs,
      perf: { now },
      // Check the clock on every read: expiry then follows the injected clock exactly.
      ttlResolution: 0,
    });
  }

  get(phone: string): CachedLookup | undefined {
    const entry = this.entries.get(phone);
    return entry && { match: entry.match, fresh: this.now() < entry.freshUntil };
  }

  set(phone: string, match: CrmMatch | null): void {
    const ttl = match ? this.settings.ttlMs : this.settings.missTtlMs;
    this.entries.set(phone, { match, freshUntil: this.now() + ttl }, { ttl: ttl + this.settings.staleMs });
  }

  /**
   * A CRM record changed (portal event): drops every answer naming that record, and every "no match",
   * since the change may have given any unknown number a client. Returns how many entries went.
   */
  forgetRecord(entityType: string, entityId: number): number {
    let dropped = 0;
    for (const [phone, entry] of this.entries.entries()) {
      const { match } = entry;
      if (match === null || (match.entityType === entityType && match.entityId === entityId)) {
        this.entries.delete(phone);
        dropped += 1;
      }
    }
    return dropped;
  }

  get size(): number {
    return this.entries.size;
  }
}
