import { CrmMatch } from './crm-match';
import { LookupCache } from './lookup-cache';

describe('LookupCache', () => {
  let now = 1_000_000;
  const clock = () => now;
  const match: CrmMatch = {
    entityType: 'CONTACT',
    entityId: 1,
    name: 'Max Mustermann',
    responsibleUserId: 2,
  };
  const cache = (maxEntries = 10) =>
    new LookupCache({ maxEntries, ttlMs: 10_000, missTtlMs: 2_000, staleMs: 60_000 }, clock);

  beforeEach(() => {
    now = 1_000_000;
  });

  it('serves an answer as fresh for its TTL, then as stale for the stale window, then forgets it', () => {
    const lookups = cache();
    lookups.set('+4915112345678', match);
    now += 9_999;
    expect(lookups.get('+4915112345678')).toEqual({ match, fresh: true });
    now += 1;
    expect(lookups.get('+4915112345678')).toEqual({ match, fresh: false });
    now += 60_000 - 1;
    expect(lookups.get('+4915112345678')?.fresh).toBe(false);
    now += 2;
    expect(lookups.get('+4915112345678')).toBeUndefined();
  });

  it('keeps "no match" fresh for the shorter miss TTL', () => {
    const lookups = cache();
    lookups.set('+49301111111', null);
    now += 1_999;
    expect(lookups.get('+49301111111')).toEqual({ match: null, fresh: true });
    now += 1;
    expect(lookups.get('+49301111111')).toEqual({ match: null, fresh: false });
  });

  it('holds at most maxEntries numbers, dropping the least recently used', () => {
    const lookups = cache(2);
    lookups.set('+491', match);
    lookups.set('+492', null);
    lookups.get('+491');
    lookups.set('+493', match);
    expect(lookups.size).toBe(2);
    expect(lookups.get('+492')).toBeUndefined();
    expect(lookups.get('+491')?.match).toEqual(match);
  });
});

describe('LookupCache.forgetRecord', () => {
  it('drops the changed record and every "no match", keeps other matches', () => {
    const cache = new LookupCache({ maxEntries: 10, ttlMs: 60_000, missTtlMs: 30_000, staleMs: 0 });
    const match = (entityId: number) => ({
      entityType: 'CONTACT' as const,
      entityId,
      name: 'x',
      responsibleUserId: null,
    });
    cache.set('+1', match(1));
    cache.set('+2', match(2));
    cache.set('+3', null);
    expect(cache.forgetRecord('CONTACT', 1)).toBe(2);
    expect(cache.get('+1')).toBeUndefined();
    expect(cache.get('+3')).toBeUndefined();
    expect(cache.get('+2')?.match?.entityId).toBe(2);
  });
});
