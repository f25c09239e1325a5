import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteDatabase } from '../store/sqlite/sqlite-database';
import { SqliteLeaseStore } from '../store/sqlite/sqlite-lease-store';
import { DeliveryLease, LeaseStore } from '../store/coordination-store';
import { LeaseKeeper } from './lease-keeper';

/** The real SQLite lease store on a temporary file, on the spec's clock, and who holds a portal's lease. */
class LeaseFile extends SqliteLeaseStore {
  constructor(
    private readonly database: SqliteDatabase,
    now: () => number = Date.now,
  ) {
    super(database, now);
  }

  holder(portalId: string): { owner: string; epoch: number } | undefined {
    return this.database.connection
      .prepare('SELECT owner, epoch FROM portal_leases WHERE portal_id = ?')
      .get(portalId) as { owner: string; epoch: number } | undefined;
  }
}

let dir: string;
const databases: SqliteDatabase[] = [];
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'bridge-lease-keeper-'))));
afterEach(() => {
  for (const database of databases.splice(0)) database.close();
  rmSync(dir, { recursive: true, force: true });
});

function openDatabase(): SqliteDatabase {
  const database = new SqliteDatabase(join(dir, 'bridge.sqlite'));
  databases.push(database);
  return database;
}

function leaseFile(now?: () => number): LeaseFile {
  return new LeaseFile(openDatabase(), now);
}

/** A keeper of portal `portal` as owner `me`, with a 60 s lease (its own ticks every 20 s). */
function keeperOf(store: LeaseStore, onAcquired: () => unknown, chaseMs?: number): LeaseKeeper {
  return new LeaseKeeper({ store, portalId: 'portal', owner: 'me', ttlMs: 60_000, onAcquired, chaseMs });
}

describe('LeaseKeeper.kick', () => {
  it('tries for the lease now rather than at the next tick (a portal this replica was just given)', async () => {
    let now = 1_000_000;
    const store = leaseFile(() => now);
    // Another replica holds the portal for 5 s.
    await store.acquireLease('portal', 'other', 5000);
    let acquired = 0;
    // A 60 s lease: the keeper's own ticks come every 20 s, far beyond this test.
    const keeper = keeperOf(store, () => (acquired += 1));
    keeper.start();
    // Its first try (at start) found the lease taken.
    await new Promise((resolve) => setImmediate(resolve));
    expect(keeper.current()).toBeUndefined();
    expect(store.holder('portal')).toEqual({ owner: 'other', epoch: 1 });

    now += 6000; // the other's lease has expired
    keeper.kick();
    await waitFor(() => acquired === 1);
    expect(store.holder('portal')).toEqual({ owner: 'me', epoch: 2 });
    await keeper.stop();
    // Stopped: a kick does nothing, and the lease was given up.
    keeper.kick();
    expect(await store.acquireLease('portal', 'other', 5000)).toEqual({
      portalId: 'portal',
      owner: 'other',
      epoch: 3,
    });
  });
});

describe('LeaseKeeper chasing a portal it was given', () => {
  it('takes the lease as soon as the previous holder lets go, long before its own next tick', async () => {
    const store = leaseFile(() => Date.now());
    const previous = await store.acquireLease('portal', 'other', 60_000);
    let acquired = 0;
    // Ticks every 20 s; chasing for 30 s after start.
    const keeper = keeperOf(store, () => (acquired += 1), 30_000);
    keeper.start();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(keeper.current()).toBeUndefined();
    // The previous holder hands over (its batches settled): released, not expired.
    await store.releaseLease(previous!);
    await waitFor(() => acquired === 1);
    expect(store.holder('portal')).toEqual({ owner: 'me', epoch: 2 });
    await keeper.stop();
  });

  it('does not chase without being asked to', async () => {
    const store = leaseFile(() => Date.now());
    const previous = await store.acquireLease('portal', 'other', 60_000);
    const keeper = keeperOf(store, () => undefined);
    keeper.start();
    await new Promise((resolve) => setTimeout(resolve, 50));
    await store.releaseLease(previous!);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(store.holder('portal')).toEqual({ owner: 'other', epoch: 1 });
    await keeper.stop();
  });
});

describe('LeaseKeeper after another replica was seen dead', () => {
  it("chases the lease when told (the store then hands a dead owner's lease over), long before its tick", async () => {
    const store = leaseFile(() => Date.now());
    const previous = await store.acquireLease('portal', 'dead', 60_000);
    let acquired = 0;
    // No chase at start (single mode: every replica competes); ticks every 20 s.
    const keeper = keeperOf(store, () => (acquired += 1));
    keeper.start();
    await new Promise((resolve) => setTimeout(resolve, 50));
    keeper.chase(2000);
    // The store lets go a moment after the watch saw the owner gone: the chase still catches it.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await store.releaseLease(previous!);
    await waitFor(() => acquired === 1);
    expect(store.holder('portal')).toEqual({ owner: 'me', epoch: 2 });
    await keeper.stop();
  });

  it('sends nothing while its replica counts as dead (its liveness mark lost), whatever the lease says', async () => {
    const store = leaseFile(() => Date.now());
    let alive = true;
    const keeper = keeperOf(store, () => undefined);
    keeper.holdOnlyWhile(() => alive);
    keeper.start();
    await waitFor(() => keeper.current() !== undefined);
    alive = false;
    expect(keeper.current()).toBeUndefined();
    alive = true;
    expect(keeper.current()).toEqual({ portalId: 'portal', owner: 'me', epoch: 1 });
    await keeper.stop();
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met within 5 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('LeaseKeeper: one renewal per process and tick, whatever the number of portals', () => {
  /** The SQLite store, counting what the keepers ask of it. */
  class CountingStore extends LeaseFile {
    acquired = 0;
    renewals: DeliveryLease[][] = [];
    override acquireLease(portalId: string, owner: string, ttlMs: number) {
      this.acquired += 1;
      return super.acquireLease(portalId, owner, ttlMs);
    }
    override renewLeases(owner: string, held: readonly DeliveryLease[], ttlMs: number) {
      this.renewals.push([...held]);
      return super.renewLeases(owner, held, ttlMs);
    }
  }

  it('renews every lease the process holds in one call per tick; each keeper learns its own', async () => {
    let now = Date.now();
    const store = new CountingStore(openDatabase(), () => now);
    // A 1.5 s lease: the shared tick comes every 500 ms.
    const keepers = ['a', 'b', 'c'].map(
      (portal) =>
        new LeaseKeeper({ store, portalId: portal, owner: 'me', ttlMs: 1500, onAcquired: () => undefined }),
    );
    for (const keeper of keepers) keeper.start();
    await waitFor(() => keepers.every((keeper) => keeper.current() !== undefined));
    expect(store.acquired).toBe(3);
    await waitFor(() => store.renewals.length >= 2);
    // Each tick one call naming all three; no portal asked on its own again.
    expect(store.renewals[0].map((lease) => lease.portalId).sort()).toEqual(['a', 'b', 'c']);
    expect(store.acquired).toBe(3);

    // Portal b's lease expires without a renewal reaching it and another replica takes it over: the next
    // shared renewal leaves it out, and b's keeper stops sending while a and c go on.
    now += 10_000;
    await store.acquireLease('b', 'other', 60_000);
    const ticks = store.renewals.length;
    await waitFor(() => store.renewals.length > ticks + 1);
    expect(keepers[1].current()).toBeUndefined();
    expect(store.holder('b')).toEqual({ owner: 'other', epoch: 2 });
    expect(keepers[0].current()).toEqual({ portalId: 'a', owner: 'me', epoch: 1 });
    expect(keepers[2].current()).toEqual({ portalId: 'c', owner: 'me', epoch: 1 });
    // The keeper without its lease asks for it on its own at each tick (acquisition stays per portal).
    expect(store.acquired).toBeGreaterThan(3);

    for (const keeper of keepers) await keeper.stop();
    // Stopped keepers are renewed no more: their leases are free at once.
    expect(await store.acquireLease('a', 'other', 60_000)).toMatchObject({ owner: 'other', epoch: 2 });
    const after = store.renewals.length;
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(store.renewals.length).toBe(after);
  });
});
