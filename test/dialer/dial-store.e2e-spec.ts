import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryDialStore } from '../../src/store/memory/memory-dial-store';
import { DialStore, NewDialRequest } from '../../src/store/dial-store';
import { openStores, Stores } from '../../src/store/store.module';
import { onPostgres, testDatabaseUrl } from '../support/test-database';

function newRequest(callId: string, clickedAt = 1_000): NewDialRequest {
  return {
    portalId: 'p1',
    portalCallId: callId,
    kind: 'click',
    userId: 2,
    phoneNumber: '+4930111',
    crmEntityType: 'LEAD',
    crmEntityId: 5,
    lineNumber: 'line-1',
    clickedAt,
    deadline: clickedAt + 30_000,
  };
}

/** The same rules in every engine: the real database of this run (SQLite file or PostgreSQL), and memory. */
describe.each(['database', 'memory'] as const)('DialStore (%s)', (kind) => {
  let dir: string;
  let stores: Stores | undefined;
  let store: DialStore;
  let second: Stores | undefined;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'bridge-dialstore-'));
    if (kind === 'memory') {
      store = new MemoryDialStore();
      return;
    }
    const settings = {
      databaseUrl: testDatabaseUrl(dir),
      poolSize: 4,
      retentionMs: 1,
      retentionDays: 1,
      portalRetentionMs: 30 * 86_400_000,
    };
    stores = await openStores(settings);
    second = await openStores(settings);
    store = stores.dials;
  });
  afterEach(async () => {
    await stores?.calls.close();
    await second?.calls.close();
    stores = second = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores a click once per CALL_ID, with every field', async () => {
    expect(await store.add(newRequest('c1'), 2_000)).toBe(true);
    expect(await store.add({ ...newRequest('c1'), userId: 9 }, 2_500)).toBe(false);
    expect(await store.find('p1', 'c1')).toEqual({
      ...newRequest('c1'),
      state: 'pending',
      attempts: 0,
      dueAt: 2_000,
      updatedAt: 2_000,
    });
    expect(await store.find('p2', 'c1')).toBeUndefined();
  });

  it('claims due pending requests for the lease, then not again until it runs out', async () => {
    await store.add(newRequest('c1'), 2_000);
    await store.add(newRequest('c2'), 5_000);
    expect((await store.claim('p1', 3_000, 10_000, 10)).map((r) => r.portalCallId)).toEqual(['c1']);
    expect(await store.claim('p1', 4_000, 10_000, 10)).toEqual([]);
    expect(await store.nextDueAt('p1')).toBe(5_000);
    expect((await store.claim('p1', 13_000, 10_000, 10)).map((r) => r.portalCallId).sort()).toEqual([
      'c1',
      'c2',
    ]);
  });

  it('updates fields, and settles a sending request whose claim ran out as sent', async () => {
    await store.add(newRequest('c1'), 2_000);
    await store.update('p1', 'c1', { state: 'sending', dueAt: 3_000, extension: '101', attempts: 1 }, 2_100);
    expect(await store.claim('p1', 2_500, 10_000, 10)).toEqual([]);
    expect(await store.find('p1', 'c1')).toMatchObject({ state: 'sending', extension: '101', attempts: 1 });
    expect(await store.claim('p1', 3_000, 10_000, 10)).toEqual([]);
    expect(await store.find('p1', 'c1')).toMatchObject({
      state: 'sent',
      lastError: 'the bridge stopped during the originate: taken as sent',
    });
    await store.update('p1', 'c1', { lastError: undefined }, 3_100);
    expect((await store.find('p1', 'c1'))!.lastError).toBeUndefined();
  });

  (kind === 'database' ? it : it.skip)(
    `two stores on one database claiming at once never take the same request (${onPostgres ? 'PostgreSQL' : 'SQLite'})`,
    async () => {
      for (let index = 0; index < 40; index += 1) await store.add(newRequest(`r${index}`), 1_000);
      const claims = await Promise.all(
        Array.from({ length: 8 }, (_, index) =>
          (index % 2 ? second! : stores!).dials.claim('p1', 2_000, 10_000, 7),
        ),
      );
      const ids = claims.flat().map((request) => request.portalCallId);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids).toHaveLength(40);
    },
  );
});
