import { CallRetention } from '../../src/store/call-retention';
import { DialStore, NewDialRequest } from '../../src/store/dial-store';
import { PortalEventStore } from '../../src/store/portal-event-store';
import { Harness, startHarness } from '../support/bridge-harness';
import { onPostgres } from '../support/test-database';

const DAY = 86_400_000;
/** No processor or dialer of the running bridge works this portal's rows: only retention touches them. */
const PORTAL = 'retention-only';

function dialRequest(portalCallId: string): NewDialRequest {
  const now = Date.now();
  return {
    portalId: PORTAL,
    portalCallId,
    kind: 'click',
    userId: 2,
    phoneNumber: '+4930555123',
    clickedAt: now,
    deadline: now + 30_000,
  };
}

/**
 * RETENTION_DAYS on the real store of a running bridge: sent or failed dial requests and handled portal
 * events older than the retention go with the calls; pending ones and recent ones stay.
 */
describe(`retention of dial requests and portal events (${onPostgres ? 'PostgreSQL' : 'SQLite'})`, () => {
  let h: Harness;
  let dials: DialStore;
  let events: PortalEventStore;

  beforeAll(async () => {
    h = await startHarness({ RETENTION_DAYS: '30' });
    dials = h.app.get(DialStore);
    events = h.app.get(PortalEventStore);
  });
  afterAll(() => h.close());

  /** Dial requests brought to `state` by a worker's claim. */
  async function settleDials(states: Record<string, 'sent' | 'failed' | 'pending'>): Promise<void> {
    for (const id of Object.keys(states)) await dials.add(dialRequest(id));
    const claimed = await dials.claim(PORTAL, 'retention-spec', 60_000, 1000);
    for (const request of claimed) {
      const state = states[request.portalCallId];
      if (state === undefined) continue;
      await dials.update(PORTAL, request.portalCallId, {
        claim: request.claim!,
        from: ['pending'],
        change: state === 'pending' ? { dueInMs: 0 } : { state },
      });
    }
  }

  /** Portal events handled (or ignored) by a processor's claim; `pending` ones left pending. */
  async function settleEvents(states: Record<string, 'processed' | 'ignored' | 'pending'>): Promise<void> {
    const ids = new Map<number, string>();
    for (const key of Object.keys(states)) {
      const { id } = await events.add({
        portalId: PORTAL,
        dedupeKey: key,
        event: 'ONEXTERNALCALLSTART',
        payload: JSON.stringify({ data: { CALL_ID: key }, ts: 1 }),
        receivedAt: Date.now(),
      });
      ids.set(id, key);
    }
    for (const event of await events.claimDue(PORTAL, 60_000, 1000)) {
      const state = states[ids.get(event.id) ?? ''];
      if (state === 'processed' || state === 'ignored') await events.settle(event.id, state);
    }
  }

  const eventKeys = async () => (await events.list(PORTAL, 2000)).map((event) => event.dedupeKey).sort();

  it('removes old settled rows and keeps recent and pending ones', async () => {
    await settleDials({ 'old-sent': 'sent', 'old-failed': 'failed', 'old-pending': 'pending' });
    await settleEvents({ 'old-processed': 'processed', 'old-ignored': 'ignored', 'old-pending': 'pending' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const cutOff = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 100));
    await settleDials({ 'new-sent': 'sent' });
    await settleEvents({ 'new-processed': 'processed' });

    // As if RETENTION_DAYS had passed since the cut-off.
    await h.app.get(CallRetention).deleteExpired(cutOff + 30 * DAY);

    expect(await dials.find(PORTAL, 'old-sent')).toBeUndefined();
    expect(await dials.find(PORTAL, 'old-failed')).toBeUndefined();
    expect(await dials.find(PORTAL, 'old-pending')).toMatchObject({ state: 'pending' });
    expect(await dials.find(PORTAL, 'new-sent')).toMatchObject({ state: 'sent' });
    expect(await eventKeys()).toEqual(['new-processed', 'old-pending']);
  });

  it('deletes in batches until none is left', async () => {
    const many = Object.fromEntries(Array.from({ length: 620 }, (_, i) => [`batch-${i}`, 'sent' as const]));
    await settleDials(many);
    await settleEvents(
      Object.fromEntries(Array.from({ length: 520 }, (_, i) => [`batch-${i}`, 'processed' as const])),
    );
    await h.app.get(CallRetention).deleteExpired(Date.now() + 31 * DAY);
    expect(await dials.find(PORTAL, 'batch-0')).toBeUndefined();
    expect(await dials.find(PORTAL, 'batch-619')).toBeUndefined();
    expect((await eventKeys()).filter((key) => key.startsWith('batch-'))).toEqual([]);
    expect(await eventKeys()).toEqual(['old-pending']);
  });
});
