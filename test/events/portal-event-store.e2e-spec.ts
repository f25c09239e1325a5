import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/app-config';
import { createStores, Stores } from '../../src/store/store.module';
import { testDatabaseUrl } from '../support/test-database';

/**
 * The `portal_events` store on the real engine (SQLite file, or PostgreSQL with TEST_DATABASE=postgres):
 * several processors (replicas: separate connections to one database) claiming at once never get one event
 * twice; a repeated post is one row; a claim is a lease.
 */
describe('portal_events store', () => {
  let dir: string;
  let replicas: Stores[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'bridge-evt-store-'));
    const config = loadConfig({ NODE_ENV: 'test', PBX_TOKENS: 'x', DATABASE_URL: testDatabaseUrl(dir) });
    replicas = [await createStores(config), await createStores(config), await createStores(config)];
  });
  afterAll(async () => {
    for (const stores of replicas) await stores.calls.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('dedupes a repeated post, and replicas claiming at once share the events without overlap', async () => {
    const [first] = replicas;
    const portalId = `p-${Date.now()}`;
    const add = (index: number) =>
      first.events.add({
        portalId,
        dedupeKey: `key-${index}`,
        event: 'ONEXTERNALCALLSTART',
        payload: JSON.stringify({ data: { CALL_ID: `c${index}` } }),
        receivedAt: Date.now() - 1000,
      });
    for (let index = 0; index < 60; index += 1) expect((await add(index)).duplicate).toBe(false);
    expect((await add(7)).duplicate).toBe(true);

    const claims = await Promise.all(
      [0, 1, 2, 0, 1, 2].map((replica) => replicas[replica].events.claimDue(portalId, 60_000, 10)),
    );
    const ids = claims.flat().map((event) => event.id);
    expect(ids).toHaveLength(60);
    expect(new Set(ids).size).toBe(60);
    // Leased: nothing is due again until the lease runs out or the event is retried.
    expect(await first.events.claimDue(portalId, 60_000, 10)).toEqual([]);

    await first.events.retry(ids[0], 0, 'dialer: unreachable');
    await first.events.settle(ids[1], 'processed');
    const [again] = await replicas[1].events.claimDue(portalId, 60_000, 10);
    expect(again).toMatchObject({ id: ids[0], attempts: 2, lastError: 'dialer: unreachable' });
    const listed = await first.events.list(portalId, 100);
    expect(listed).toHaveLength(60);
    expect(listed.find((event) => event.id === ids[1])).toMatchObject({ state: 'processed', dueAt: null });
  });
});
