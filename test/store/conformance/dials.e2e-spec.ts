import { DialStore, NewDialRequest } from '../../../src/store/dial-store';
import { Stores } from '../../../src/store/store.module';
import { eventually } from '../../support/bridge-harness';
import { TEST_ENGINES, TestEngine } from '../../support/test-database';
import { openEngine } from './engines';

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

/** The dial store's contract, the same on both engines: two stores on one database are two replicas. */
describe.each(TEST_ENGINES)('DialStore (%s)', (name, engineOf) => {
  let engine: TestEngine;
  let stores: Stores;
  let store: DialStore;
  let second: Stores;

  beforeEach(async () => {
    engine = engineOf();
    stores = await openEngine(engine);
    second = await openEngine(engine);
    store = stores.dials;
  });
  afterEach(async () => {
    await stores.calls.close();
    await second.calls.close();
    await engine.drop();
  });

  it('stores a click once per CALL_ID, with every field, due at once on the database clock', async () => {
    const before = Date.now();
    expect(await store.add(newRequest('c1'))).toBe(true);
    expect(await store.add({ ...newRequest('c1'), userId: 9 })).toBe(false);
    const found = await store.find('p1', 'c1');
    expect(found).toMatchObject({ ...newRequest('c1'), state: 'pending', attempts: 0 });
    expect(found!.claim).toBeUndefined();
    // The database's clock and this process's are the same host's here.
    expect(found!.dueAt).toBeGreaterThanOrEqual(before - 1000);
    expect(found!.dueAt).toBeLessThanOrEqual(Date.now() + 1000);
    expect(await store.find('p2', 'c1')).toBeUndefined();
  });

  it('claims due pending requests for the lease, each with a new epoch, then not again until it runs out', async () => {
    await store.add(newRequest('c1'));
    const [first] = await store.claim('p1', 'replica-a', 600, 10);
    expect(first).toMatchObject({ portalCallId: 'c1', claim: { owner: 'replica-a', epoch: 1 } });
    expect(await store.claim('p1', 'replica-b', 600, 10)).toEqual([]);
    const [second] = await eventually(async () => {
      const claimed = await store.claim('p1', 'replica-b', 600, 10);
      return claimed.length ? claimed : undefined;
    });
    expect(second.claim).toEqual({ owner: 'replica-b', epoch: 2 });
  });

  it('a change names its claim: a stale claimant changes nothing and learns it lost', async () => {
    await store.add(newRequest('c1'));
    const [stale] = await store.claim('p1', 'replica-a', 0, 10);
    const [current] = await store.claim('p1', 'replica-b', 60_000, 10);
    expect(current.claim!.epoch).toBe(stale.claim!.epoch + 1);
    const sending = { state: 'sending', dueInMs: 60_000, extension: '101' } as const;
    expect(await store.update('p1', 'c1', { claim: stale.claim!, from: ['pending'], change: sending })).toBe(
      false,
    );
    expect(await store.find('p1', 'c1')).toMatchObject({ state: 'pending', claim: current.claim });
    expect(
      await store.update('p1', 'c1', { claim: current.claim!, from: ['pending'], change: sending }),
    ).toBe(true);
    expect(
      await store.update('p1', 'c1', { claim: current.claim!, from: ['sending'], change: { state: 'sent' } }),
    ).toBe(true);
    // A late failure, by the stale claimant or by the current one from a state the request has left, resets nothing.
    const reset = { state: 'pending', lastError: 'late failure', dueInMs: 0 } as const;
    expect(
      await store.update('p1', 'c1', { claim: stale.claim!, from: ['pending', 'sending'], change: reset }),
    ).toBe(false);
    expect(await store.update('p1', 'c1', { claim: current.claim!, from: ['pending'], change: reset })).toBe(
      false,
    );
    expect(await store.find('p1', 'c1')).toMatchObject({ state: 'sent', extension: '101' });
    expect(await store.claim('p1', 'replica-c', 0, 10)).toEqual([]);
  });

  it('settles a sending request whose claim ran out as sent, never claimed again', async () => {
    await store.add(newRequest('c1'));
    const [claimed] = await store.claim('p1', 'replica-a', 60_000, 10);
    await store.update('p1', 'c1', {
      claim: claimed.claim!,
      from: ['pending'],
      change: { state: 'sending', dueInMs: 300, extension: '101', attempts: 1 },
    });
    expect(await store.claim('p1', 'replica-b', 60_000, 10)).toEqual([]);
    expect(await store.find('p1', 'c1')).toMatchObject({ state: 'sending', extension: '101', attempts: 1 });
    await eventually(async () => {
      expect(await store.claim('p1', 'replica-b', 60_000, 10)).toEqual([]);
      const found = await store.find('p1', 'c1');
      return found?.state === 'sent' ? found : undefined;
    });
    expect(await store.find('p1', 'c1')).toMatchObject({
      state: 'sent',
      lastError: 'the bridge stopped during the originate: taken as sent',
    });
  });

  it('retention deletes sent and failed requests last changed before the cut-off, and keeps the rest', async () => {
    for (const id of ['old-sent', 'old-failed', 'old-pending', 'new-sent']) await store.add(newRequest(id));
    const claims = new Map((await store.claim('p1', 'r', 60_000, 10)).map((r) => [r.portalCallId, r.claim!]));
    const settle = (id: string, state: 'sent' | 'failed') =>
      store.update('p1', id, { claim: claims.get(id)!, from: ['pending'], change: { state } });
    await settle('old-sent', 'sent');
    await settle('old-failed', 'failed');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const cutOff = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 50));
    await settle('new-sent', 'sent');
    expect(await store.deleteSettled(cutOff, 1)).toBe(1);
    expect(await store.deleteSettled(cutOff, 100)).toBe(1);
    expect(await store.deleteSettled(cutOff, 100)).toBe(0);
    expect(await store.find('p1', 'old-sent')).toBeUndefined();
    expect(await store.find('p1', 'old-failed')).toBeUndefined();
    expect(await store.find('p1', 'old-pending')).toMatchObject({ state: 'pending' });
    expect(await store.find('p1', 'new-sent')).toMatchObject({ state: 'sent' });
  });

  it(`two stores on one database claiming at once never take the same request (${name})`, async () => {
    for (let index = 0; index < 40; index += 1) await store.add(newRequest(`r${index}`));
    const claims = await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        (index % 2 ? second : stores).dials.claim('p1', `replica-${index}`, 10_000, 7),
      ),
    );
    // SKIP LOCKED promises no request twice, not that one round of racing claims takes every row (a claim
    // skips rows another holds a moment): what a round leaves, the next claims take.
    for (let round = 0; round < 5 && claims.flat().length < 40; round += 1) {
      claims.push(await stores.dials.claim('p1', `replica-late-${round}`, 10_000, 7));
    }
    const ids = claims.flat().map((request) => request.portalCallId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(40);
  });
});
