import { MemoryLeaseStore } from '../store/memory/memory-lease-store';
import { LeaseKeeper } from './lease-keeper';

describe('LeaseKeeper.kick', () => {
  it('tries for the lease now rather than at the next tick (a portal this replica was just given)', async () => {
    let now = 1_000_000;
    const store = new MemoryLeaseStore(() => now);
    // Another replica holds the portal for 5 s.
    await store.acquireLease('portal', 'other', 5000);
    let acquired = 0;
    // A 60 s lease: the keeper's own ticks come every 20 s, far beyond this test.
    const keeper = new LeaseKeeper(store, 'portal', 'me', 60_000, () => (acquired += 1));
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
    const store = new MemoryLeaseStore(() => Date.now());
    const previous = await store.acquireLease('portal', 'other', 60_000);
    let acquired = 0;
    // Ticks every 20 s; chasing for 30 s after start.
    const keeper = new LeaseKeeper(store, 'portal', 'me', 60_000, () => (acquired += 1), 30_000);
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
    const store = new MemoryLeaseStore(() => Date.now());
    const previous = await store.acquireLease('portal', 'other', 60_000);
    const keeper = new LeaseKeeper(store, 'portal', 'me', 60_000, () => undefined);
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
    const store = new MemoryLeaseStore(() => Date.now());
    const previous = await store.acquireLease('portal', 'dead', 60_000);
    let acquired = 0;
    // No chase at start (single mode: every replica competes); ticks every 20 s.
    const keeper = new LeaseKeeper(store, 'portal', 'me', 60_000, () => (acquired += 1));
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
    const store = new MemoryLeaseStore(() => Date.now());
    let alive = true;
    const keeper = new LeaseKeeper(store, 'portal', 'me', 60_000, () => undefined);
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
