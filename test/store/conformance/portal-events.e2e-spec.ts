import { eventually } from '../../support/bridge-harness';
import { TEST_ENGINES } from '../../support/test-database';
import { storesPerTest } from './engines';

/** The portal's event posts (docs/API.md): deduped, claimed under a lease on the database's clock. */
describe.each(TEST_ENGINES)('PortalEventStore (%s)', (_name, engineOf) => {
  const { stores } = storesPerTest(engineOf);
  const event = { portalId: 'p', dedupeKey: 'k', event: 'E', payload: '{}', receivedAt: 1000 };

  it('dedupes, claims due events once per lease, retries later and settles for good', async () => {
    const events = stores().events;
    const first = await events.add(event);
    expect(first.duplicate).toBe(false);
    expect(await events.add(event)).toEqual({ id: first.id, duplicate: true });
    expect(await events.claimDue('p', 300, 10)).toHaveLength(1);
    expect(await events.claimDue('p', 300, 10)).toHaveLength(0);
    // The lease runs out: claimed again, a second attempt.
    const [again] = await eventually(async () => {
      const claimed = await events.claimDue('p', 300, 10);
      return claimed.length > 0 ? claimed : undefined;
    });
    expect(again.attempts).toBe(2);
    await events.retry(first.id, 300, 'dialer: down');
    expect(await events.claimDue('p', 300, 10)).toHaveLength(0);
    const retried = await eventually(async () => {
      const claimed = await events.claimDue('p', 300, 10);
      return claimed.length > 0 ? claimed : undefined;
    });
    expect(retried).toHaveLength(1);
    await events.settle(first.id, 'processed');
    expect(await events.claimDue('p', 300, 10)).toHaveLength(0);
    expect((await events.list('p', 10))[0]).toMatchObject({ state: 'processed', lastError: 'dialer: down' });
    expect(await events.list('other', 10)).toEqual([]);
  });

  it('keeps events of other portals apart, and retention deletes only settled events before the cut-off', async () => {
    const events = stores().events;
    const a = await events.add(event);
    const b = await events.add({ ...event, portalId: 'q' });
    expect(b.duplicate).toBe(false);
    expect(await events.claimDue('q', 60_000, 10)).toHaveLength(1);
    await events.settle(a.id, 'ignored', 'not handled');
    expect(await events.deleteSettled(Date.now() + 60_000, 10)).toBe(1);
    expect(await events.list('p', 10)).toEqual([]);
    expect(await events.list('q', 10)).toHaveLength(1);
  });

  it("publishes a signal to this process's watchers before it resolves; a stopped watcher hears nothing", async () => {
    const heard: unknown[] = [];
    const stopped: unknown[] = [];
    stores().events.watch((signal) => heard.push(signal));
    stores().events.watch((signal) => stopped.push(signal))();
    const signal = { portalId: 'p', kind: 'crm-changed', entityType: 'CONTACT', entityId: 7 } as const;
    await stores().events.publish(signal);
    expect(heard).toContainEqual(signal);
    expect(stopped).toEqual([]);
  });
});
