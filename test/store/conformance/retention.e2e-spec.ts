import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CallEvent, CallRecord, withDelivery, withPortal } from '../../../src/calls/call';
import { applyEvent, newCall, plan } from '../../../src/calls/call-lifecycle';
import { AppConfig, loadConfig } from '../../../src/config/app-config';
import { storeSettingsOf } from '../../../src/config/settings';
import { BridgeMetrics } from '../../../src/metrics/bridge-metrics';
import { CallRetention } from '../../../src/store/call-retention';
import { CallStore } from '../../../src/store/call-store';
import { createStores } from '../../../src/store/store.module';
import { eventually, PBX_TOKEN, startHarness } from '../../support/bridge-harness';
import { TEST_ENGINES, TestEngine } from '../../support/test-database';
import { endedEvent, startedEvent } from '../../support/call-events';

const PORTAL = 'sandbox';
const DAY = 86_400_000;
const NOW = Date.now();
/** RETENTION_DAYS is 30 (the default) here: a day either side of it. */
const OLD = NOW - 31 * DAY;
const RECENT = NOW - 29 * DAY;

type Outcome = 'finished' | 'failed' | 'queued' | 'recording-pending';

/** The lifecycle's own rules, run at a moment of the test's choosing: that is the clock of these rows. */
const applyAt = (at: number) => (call: CallRecord | undefined, event: CallEvent) =>
  applyEvent(call ?? newCall(PORTAL, event.callId, at), event, {
    now: at,
    holdEndedWithoutStartMs: 3_600_000,
  });

/** Calls taken in at `at` and, unless left queued, brought to `outcome` by delivery at that same moment. */
async function seed(store: CallStore, callIds: string[], at: number, outcome: Outcome): Promise<void> {
  const recording = outcome === 'recording-pending' ? 'https://pbx.example.com/rec/1.wav' : undefined;
  await store.ingest(
    PORTAL,
    [callIds.flatMap((id) => [startedEvent(id), endedEvent(id, recording)])],
    applyAt(at),
  );
  if (outcome === 'queued') return;
  await store.updateCalls(PORTAL, callIds, (call) =>
    plan(
      outcome === 'failed'
        ? { ...withDelivery(call, { failed: true, lastError: 'ACCESS_DENIED' }), updatedAt: at }
        : { ...withPortal(call, { callId: `portal-${call.callId}`, finished: true }), updatedAt: at },
      at,
    ),
  );
}

async function deletedCounter(metrics: BridgeMetrics): Promise<number> {
  return (await metrics.callsDeleted.get()).values[0]?.value ?? 0;
}

const ids = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}-${i}`);

/**
 * RETENTION_DAYS on the real store (SQLite, or PostgreSQL with TEST_DATABASE=postgres): rows are written
 * through the store with old timestamps, as the bridge would have written them a month ago.
 */
describe.each(TEST_ENGINES)('retention of settled calls (%s)', (_name, engineOf) => {
  let engine: TestEngine;
  let dir: string;
  let config: AppConfig;
  const opened: CallStore[] = [];

  const openStore = async (): Promise<CallStore> => {
    const { calls } = await createStores(config);
    opened.push(calls);
    return calls;
  };

  beforeEach(() => {
    engine = engineOf();
    dir = mkdtempSync(join(tmpdir(), 'bridge-retention-'));
    config = loadConfig({ NODE_ENV: 'test', PBX_TOKENS: 'x', DATABASE_URL: engine.settings().databaseUrl });
  });
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    await engine.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('deletes old finished and failed calls with their events, keeps recent and unfinished ones', async () => {
    const store = await openStore();
    await seed(store, ['old-finished'], OLD, 'finished');
    await seed(store, ['old-failed'], OLD, 'failed');
    await seed(store, ['recent-finished'], RECENT, 'finished');
    await seed(store, ['old-queued'], OLD, 'queued');
    await seed(store, ['old-recording-pending'], OLD, 'recording-pending');
    // Failed a month ago, re-queued by an operator and failed again yesterday: its last change is recent.
    await seed(store, ['requeued'], OLD, 'failed');
    await seed(store, ['requeued'], NOW - DAY, 'failed');
    expect(await store.findCall(PORTAL, 'old-queued')).toMatchObject({
      delivery: { state: 'queued', nextStep: 'register' },
    });
    expect(await store.findCall(PORTAL, 'old-recording-pending')).toMatchObject({
      delivery: { state: 'finished', nextStep: 'attachRecord' },
    });

    const metrics = new BridgeMetrics();
    const retention = new CallRetention({ calls: store }, storeSettingsOf(config), metrics);
    expect(await retention.deleteExpired(NOW)).toBe(2);
    expect(await deletedCounter(metrics)).toBe(2);

    expect(await store.findCall(PORTAL, 'old-finished')).toBeUndefined();
    expect(await store.findCall(PORTAL, 'old-failed')).toBeUndefined();
    for (const kept of ['recent-finished', 'old-queued', 'old-recording-pending', 'requeued']) {
      expect(await store.findCall(PORTAL, kept)).toBeDefined();
    }
    expect(await store.queueStats(PORTAL)).toMatchObject({ depth: 2, failed: 1 });

    // The documented consequence: a deleted call's (callId, event) is unknown again, so a late repeat is new.
    const again = await store.ingest(
      PORTAL,
      [
        [endedEvent('old-finished')],
        [startedEvent('old-failed')],
        [endedEvent('recent-finished')],
        [endedEvent('old-queued')],
      ],
      applyAt(NOW),
    );
    expect(again).toEqual([
      { accepted: 1, duplicates: 0 },
      { accepted: 1, duplicates: 0 },
      { accepted: 0, duplicates: 1 },
      { accepted: 0, duplicates: 1 },
    ]);
    expect(await store.findCall(PORTAL, 'old-finished')).toMatchObject({
      createdAt: NOW,
      delivery: { state: 'queued', nextStep: 'wait-start' },
    });

    // A second run finds nothing more to delete.
    expect(await retention.deleteExpired(NOW)).toBe(0);
  });

  it('deletes in batches of 500 and stops after the batch in flight when the application shuts down', async () => {
    const store = await openStore();
    await seed(store, ids('bulk', 1201), OLD, 'finished');

    const stopping = new CallRetention({ calls: store }, storeSettingsOf(config), new BridgeMetrics());
    const run = stopping.deleteExpired(NOW);
    await stopping.onModuleDestroy();
    expect(await run).toBe(500);
    expect(await store.findCall(PORTAL, 'bulk-0')).toBeUndefined();

    // The rest goes in the next run (two more batches: 500 and 201).
    const metrics = new BridgeMetrics();
    expect(
      await new CallRetention({ calls: store }, storeSettingsOf(config), metrics).deleteExpired(NOW),
    ).toBe(701);
    expect(await deletedCounter(metrics)).toBe(701);
    for (const id of ['bulk-1', 'bulk-600', 'bulk-1200']) {
      expect(await store.findCall(PORTAL, id)).toBeUndefined();
    }
  });

  it('two replicas running it at once share the work: each call deleted once, none left', async () => {
    const first = await openStore();
    const second = await openStore();
    await seed(first, ids('shared', 1500), OLD, 'failed');
    await seed(first, ['shared-recent'], RECENT, 'failed');

    const [a, b] = await Promise.all([
      new CallRetention({ calls: first }, storeSettingsOf(config), new BridgeMetrics()).deleteExpired(NOW),
      new CallRetention({ calls: second }, storeSettingsOf(config), new BridgeMetrics()).deleteExpired(NOW),
    ]);
    expect(a + b).toBe(1500);
    expect(await first.queueStats(PORTAL)).toMatchObject({ failed: 1 });
    expect(await second.findCall(PORTAL, 'shared-recent')).toBeDefined();
  });

  it('the bridge deletes old settled calls at start-up, counts them in /metrics and shuts down cleanly', async () => {
    const store = await openStore();
    await seed(store, ['boot-old-finished', 'boot-old-finished-2'], OLD, 'finished');
    await seed(store, ['boot-recent'], RECENT, 'finished');
    await store.close();
    opened.splice(0);

    const h = await startHarness(
      { RETENTION_DAYS: '30', DATABASE_URL: engine.settings().databaseUrl },
      {},
      { dir },
    );
    try {
      const status = (callId: string) =>
        h.http.get(`/v1/calls/${callId}`).set('Authorization', `Bearer ${PBX_TOKEN}`);
      await eventually(async () => ((await status('boot-old-finished')).status === 404 ? true : undefined));
      expect((await status('boot-old-finished-2')).status).toBe(404);
      expect((await status('boot-recent')).status).toBe(200);
      const metrics = await eventually(async () => {
        const text = (await h.http.get('/metrics')).text;
        return /^bridge_calls_deleted_total 2$/m.test(text) ? text : undefined;
      });
      expect(metrics).toContain('bridge_calls_deleted_total');
    } finally {
      await h.close();
    }
  });
});
