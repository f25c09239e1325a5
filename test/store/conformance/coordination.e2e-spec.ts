import { eventually } from '../../support/bridge-harness';
import { TEST_ENGINES } from '../../support/test-database';
import { openEngine, storesPerTest } from './engines';

/** Delivery leases, the shared request bucket, the replica registry and follow positions, on both engines. */
describe.each(TEST_ENGINES)('coordination (%s)', (name, engineOf) => {
  const { stores, engine } = storesPerTest(engineOf);

  it('leases: free or expired taken with the next epoch, renewed by their owner, released at once', async () => {
    const leases = stores().leases;
    const mine = await leases.acquireLease('p', 'me', 60_000);
    expect(mine).toEqual({ portalId: 'p', owner: 'me', epoch: 1 });
    expect(await leases.acquireLease('p', 'other', 60_000)).toBeUndefined();
    // The owner again: renewed, same epoch.
    expect(await leases.acquireLease('p', 'me', 60_000)).toEqual(mine);
    const q = (await leases.acquireLease('q', 'me', 60_000))!;
    expect(
      await leases.renewLeases('me', [mine!, q, { portalId: 'r', owner: 'me', epoch: 1 }], 60_000),
    ).toEqual(expect.arrayContaining([mine, q]));
    expect(await leases.renewLeases('other', [mine!], 60_000)).toEqual([]);
    await leases.releaseLease(mine!);
    const theirs = await leases.acquireLease('p', 'other', 60_000);
    expect(theirs).toEqual({ portalId: 'p', owner: 'other', epoch: 2 });
    // The old epoch renews nothing, releases nothing.
    expect(await leases.renewLeases('me', [mine!], 60_000)).toEqual([]);
    await leases.releaseLease(mine!);
    expect(await leases.acquireLease('p', 'me', 60_000)).toBeUndefined();
    // A short lease runs out on its own: anyone takes it, one epoch higher.
    await leases.acquireLease('s', 'a', 1);
    // Taken once the database's clock has passed it: the wait is on the lease, not on a guessed time.
    expect(await eventually(() => leases.acquireLease('s', 'b', 60_000))).toEqual({
      portalId: 's',
      owner: 'b',
      epoch: 2,
    });
  });

  it('a second process on the same database sees the same leases', async () => {
    const second = await openEngine(engine());
    try {
      await stores().leases.acquireLease('p', 'me', 60_000);
      expect(await second.leases.acquireLease('p', 'other', 60_000)).toBeUndefined();
    } finally {
      await second.replicas.leave();
      await second.calls.close();
    }
  });

  it('replicas: a joined replica is live and holds its mark until it leaves', async () => {
    const replicas = stores().replicas;
    expect(replicas.holdsMark()).toBe(false);
    await replicas.join('replica-1');
    expect(replicas.holdsMark()).toBe(true);
    expect(await replicas.liveReplicas()).toContain('replica-1');
    await replicas.leave();
    expect(replicas.holdsMark()).toBe(false);
  });

  it('follow positions: one per portal and source, the last put wins', async () => {
    const positions = stores().followPositions;
    expect(await positions.get('p', 'cdr')).toBeUndefined();
    await positions.put('p', 'cdr', '41', 1);
    await positions.put('p', 'cdr', '42', 2);
    await positions.put('p', 'other', 'x', 2);
    await positions.put('q', 'cdr', 'y', 2);
    expect(await positions.get('p', 'cdr')).toBe('42');
    expect(await positions.get('p', 'other')).toBe('x');
    expect(await positions.get('q', 'cdr')).toBe('y');
  });

  (name === 'postgres' ? it : it.skip)(
    'the shared bucket (PostgreSQL only): units, refunds, 503s and recovery',
    async () => {
      const bucket = stores().bucket!;
      const request = { ratePerSec: 2, limit: 2 };
      expect(await bucket.take('p', request)).toMatchObject({ waitMs: 0 });
      expect(await bucket.take('p', request)).toMatchObject({ waitMs: 0 });
      const full = await bucket.take('p', request);
      expect(full.waitMs).toBeGreaterThan(0);
      await bucket.refund('p', 2);
      expect(await bucket.take('p', request)).toMatchObject({ waitMs: 0 });
      expect(await bucket.take('q', request)).toMatchObject({ waitMs: 0, level: 1 });
      await bucket.rejected('q', 2, 10, 0.25);
      const after503 = await bucket.take('q', { ratePerSec: 2, limit: 20 });
      expect(after503.factor).toBe(0.5);
      await bucket.accepted('q', 0.25);
      expect((await bucket.take('q', { ratePerSec: 2, limit: 20 })).factor).toBe(0.75);
    },
  );

  (name === 'postgres' ? it : it.skip)(
    'the shared bucket (PostgreSQL only): a request that left late raises the level for everyone',
    async () => {
      const bucket = stores().bucket!;
      // A drain of one unit per 1 000 s: nothing the statements' own time could blur.
      const request = { ratePerSec: 0.001, limit: 2 };
      expect(await bucket.take('late', request)).toMatchObject({ waitMs: 0, level: 1 });
      await bucket.spentLate('late', 0.001, 0.5);
      const next = await bucket.take('late', request);
      expect(next.waitMs).toBeGreaterThan(0);
      expect(next.level).toBeCloseTo(1.5, 2);
      // At most one unit per late request, however late.
      await bucket.spentLate('late', 0.001, 5);
      expect((await bucket.take('late', { ratePerSec: 0.001, limit: 10 })).level).toBeCloseTo(3.5, 2);
    },
  );

  (name === 'sqlite' ? it : it.skip)(
    'no shared bucket on SQLite: one process keeps its own in memory',
    () => {
      expect(stores().bucket).toBeUndefined();
    },
  );
});
