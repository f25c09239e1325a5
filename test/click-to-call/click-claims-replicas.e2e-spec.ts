import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CallEvent, CallRecord } from '../../src/calls/call';
import { applyEvent, newCall, plan } from '../../src/calls/call-lifecycle';
import { ClickClaims, linkPortalCall } from '../../src/calls/click-match';
import { loadConfig } from '../../src/config/app-config';
import { createStores, Stores } from '../../src/store/store.module';
import { onPostgres, testDatabaseUrl } from '../support/test-database';

const PORTAL = 'clicks';
const PHONE = '+4922155509090';
const match = { windowMs: 60_000, userOf: (extension: string) => (extension === '101' ? 2 : undefined) };

/** Intake's applier: the lifecycle, then the link to the portal's call. */
function apply(call: CallRecord | undefined, event: CallEvent, clicks: ClickClaims): CallRecord {
  const now = Date.now();
  const applied = applyEvent(call ?? newCall(PORTAL, event.callId, now), event, {
    now,
    holdEndedWithoutStartMs: 60_000,
  });
  return plan(linkPortalCall(applied, event, clicks, match), now);
}

const started = (callId: string, at: number, crmCallId?: string): CallEvent => ({
  event: 'call.started',
  callId,
  direction: 'outbound',
  phoneNumber: PHONE,
  extension: '101',
  at: new Date(at).toISOString(),
  crmCallId,
});

/**
 * Two store instances on one database, as two replicas: a click, or a CALL_ID, is taken by one bridge call
 * only, however their intake transactions interleave.
 */
describe(`click claims across replicas (${onPostgres ? 'PostgreSQL' : 'SQLite'})`, () => {
  let dir: string;
  let first: Stores;
  let second: Stores;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'bridge-clicks-'));
    const config = loadConfig({ NODE_ENV: 'test', PBX_TOKENS: 'x', DATABASE_URL: testDatabaseUrl(dir) });
    first = await createStores(config);
    second = await createStores(config);
  });
  afterAll(async () => {
    await first.calls.close();
    await second.calls.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores a click once, and two calls at once take it once', async () => {
    const clickedAt = Date.now();
    const click = { portalCallId: 'externalCall.r1.1', userId: 2, phoneNumber: PHONE, clickedAt };
    await first.calls.saveClick(PORTAL, click);
    await second.calls.saveClick(PORTAL, { ...click, userId: 9 });
    expect(await first.calls.findClick(PORTAL, click.portalCallId)).toEqual(click);

    const results = await Promise.all(
      Array.from({ length: 6 }, (_, index) =>
        (index % 2 ? first : second).calls.ingest(PORTAL, [[started(`r-${index}`, clickedAt + 1000)]], apply),
      ),
    );
    expect(results.every(([result]) => result.accepted === 1)).toBe(true);
    const calls = await Promise.all(
      Array.from({ length: 6 }, (_, index) => first.calls.findCall(PORTAL, `r-${index}`)),
    );
    const taken = calls.filter((call) => call?.portal.callId === click.portalCallId);
    expect(taken).toHaveLength(1);
    expect(calls.filter((call) => call?.delivery.nextStep === 'register')).toHaveLength(5);
    expect((await second.calls.findClick(PORTAL, click.portalCallId))?.matchedCallId).toBe(taken[0]!.callId);
  });

  it('two calls carrying one crmCallId at once: one holds it, the other never finishes it', async () => {
    const id = 'externalCall.r2.1';
    await Promise.all([
      first.calls.ingest(PORTAL, [[started('dial-x', Date.now(), id)]], apply),
      second.calls.ingest(PORTAL, [[started('pbx-x', Date.now(), id)]], apply),
    ]);
    const calls = [await first.calls.findCall(PORTAL, 'dial-x'), await first.calls.findCall(PORTAL, 'pbx-x')];
    expect(calls.every((call) => call?.portal.callId === id)).toBe(true);
    const holders = calls.filter((call) => call?.portal.clickToCall?.finishedBy === undefined);
    expect(holders).toHaveLength(1);
    const other = calls.find((call) => call !== holders[0])!;
    expect(other.portal.clickToCall?.finishedBy).toBe(holders[0]!.callId);
    expect(other.portal.finished).toBe(true);
    // A click published after its CALL_ID was taken keeps the taker.
    await first.calls.saveClick(PORTAL, {
      portalCallId: id,
      userId: 2,
      phoneNumber: PHONE,
      clickedAt: Date.now(),
    });
    expect(await first.calls.findClick(PORTAL, id)).toMatchObject({
      userId: 2,
      matchedCallId: holders[0]!.callId,
    });
  });

  it('retention removes clicks stored before its cut-off', async () => {
    await first.calls.saveClick(PORTAL, {
      portalCallId: 'externalCall.old.1',
      phoneNumber: PHONE,
      clickedAt: 1,
    });
    await first.calls.deleteSettledCalls(Date.now() + 1000, 100);
    expect(await second.calls.findClick(PORTAL, 'externalCall.old.1')).toBeUndefined();
    expect(await second.calls.findClick(PORTAL, 'externalCall.r1.1')).toBeUndefined();
  });
});
