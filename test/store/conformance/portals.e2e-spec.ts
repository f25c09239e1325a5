import { applyEvent, newCall } from '../../../src/calls/call-lifecycle';
import { openStores, Stores } from '../../../src/store/store.module';
import { startedEvent } from '../../support/call-events';
import { TEST_ENGINES, TestEngine } from '../../support/test-database';

/** The portal records of many-portal mode (docs/API.md), the same on both engines. */
describe.each(TEST_ENGINES)('PortalStore (%s)', (_name, engineOf) => {
  let engine: TestEngine;
  let stores: Stores;

  beforeEach(async () => {
    engine = engineOf();
    stores = await openStores({
      ...engine.settings(),
      retentionMs: 1,
      retentionDays: 1,
      portalRetentionMs: 1,
    });
  });
  afterEach(async () => {
    await stores.calls.close();
    await engine.drop();
  });

  const install = (portalId: string, now: number, domain = `${portalId}.example.com`) =>
    stores.portals.saveInstall({
      portalId,
      domain,
      clientEndpoint: `https://${domain}/rest/`,
      now,
      grant: {
        portalId,
        memberId: portalId,
        domain,
        clientEndpoint: `https://${domain}/rest/`,
        accessToken: `access-${portalId}-${now}`,
        refreshToken: `refresh-${portalId}-${now}`,
        accessExpiresAt: now + 3_600_000,
        obtainedAt: now,
        applicationToken: `app-${portalId}`,
      },
    });

  async function storeCall(portalId: string, callId: string): Promise<void> {
    const now = Date.now();
    await stores.calls.ingest(portalId, [[startedEvent(callId)]], (call, event) =>
      applyEvent(call ?? newCall(portalId, event.callId, now), event, {
        now,
        holdEndedWithoutStartMs: 60_000,
      }),
    );
  }

  it("stores single mode's seeded portal once: its settings and tokens stay, a new address is taken, a same start changes no version", async () => {
    const seeded = {
      portalId: 'sandbox',
      domain: 'one.example.com',
      clientEndpoint: 'https://one.example.com/rest/',
    };
    const created = await stores.portals.ensurePortal({ ...seeded, now: 1_000 });
    expect(created).toMatchObject({ ...seeded, status: 'active', settings: {}, updatedAt: 1_000 });
    await stores.portals.updateSettings('sandbox', { defaultCountry: 'AT' }, 2_000);
    expect(
      await stores.portals.addPbxToken({ id: 't-1', portalId: 'sandbox', createdAt: 2_000, digest: 'ab' }),
    ).toBe(true);
    // Another replica starting, or a restart: the record as stored, its version unchanged.
    const again = await stores.portals.ensurePortal({ ...seeded, now: 3_000 });
    expect(again.settings).toEqual({ defaultCountry: 'AT' });
    expect(again.updatedAt).toBe(2_000);
    // The environment names another address: taken, with a newer version; settings and tokens stay.
    const moved = await stores.portals.ensurePortal({
      portalId: 'sandbox',
      domain: 'two.example.com',
      clientEndpoint: 'https://two.example.com/rest/',
      now: 4_000,
    });
    expect(moved).toMatchObject({ domain: 'two.example.com', settings: { defaultCountry: 'AT' } });
    expect(moved.updatedAt).toBeGreaterThan(2_000);
    expect((await stores.portals.listPbxTokens('sandbox')).map((token) => token.id)).toEqual(['t-1']);
  });

  it('keeps settings and PBX tokens across an uninstall and a reinstall, and pages the list', async () => {
    await install('m-a', 1_000);
    await install('m-b', 1_000);
    await stores.portals.updateSettings('m-a', { defaultUserId: 7, bindCrmEntity: true }, 1_100);
    expect(
      await stores.portals.addPbxToken({ id: 't1', portalId: 'm-a', digest: 'aa', createdAt: 1_200 }),
    ).toBe(true);
    expect(
      await stores.portals.addPbxToken({ id: 't2', portalId: 'nobody', digest: 'bb', createdAt: 1_200 }),
    ).toBe(false);
    expect(await stores.portals.markUninstalled('m-a', 2_000)).toBe(true);
    expect(await stores.portals.findPortal('m-a')).toMatchObject({
      status: 'uninstalled',
      uninstalledAt: 2_000,
    });
    expect(await stores.portals.findPbxToken('aa')).toMatchObject({ portalId: 'm-a', status: 'uninstalled' });
    const again = await install('m-a', 3_000, 'moved.example.com');
    expect(again).toMatchObject({
      status: 'active',
      uninstalledAt: undefined,
      domain: 'moved.example.com',
      settings: { defaultUserId: 7, bindCrmEntity: true },
    });
    expect(await stores.portals.listPbxTokens('m-a')).toEqual([
      { id: 't1', portalId: 'm-a', createdAt: 1_200 },
    ]);
    const cleared = await stores.portals.updateSettings('m-a', { defaultUserId: null }, 3_100);
    expect(cleared?.settings).toEqual({ bindCrmEntity: true });
    expect((await stores.portals.listPortals({ limit: 1 })).map((p) => p.portalId)).toEqual(['m-a']);
    expect((await stores.portals.listPortals({ after: 'm-a', limit: 5 })).map((p) => p.portalId)).toEqual([
      'm-b',
    ]);
    // Every change is a new version, so each replica rebuilds what changed.
    const versions = await stores.portals.portalVersions();
    expect(versions.find((v) => v.portalId === 'm-a')?.updatedAt).toBeGreaterThanOrEqual(3_100);
    expect(await stores.portals.revokePbxToken('m-a', 't1')).toBe(true);
    expect(await stores.portals.findPbxToken('aa')).toBeUndefined();
  });

  it("deletes an uninstalled portal's rows in every table after retention, and nothing of the others", async () => {
    for (const portalId of ['gone', 'kept', 'back']) {
      await install(portalId, 1_000);
      await storeCall(portalId, `${portalId}-call`);
      await stores.tokens.saveGrant({
        portalId,
        memberId: portalId,
        domain: `${portalId}.example.com`,
        accessToken: `a-${portalId}`,
        refreshToken: `r-${portalId}`,
        accessExpiresAt: 9_000_000_000_000,
        obtainedAt: 1_000,
        applicationToken: `app-${portalId}`,
      });
      await stores.portals.addPbxToken({
        id: `t-${portalId}`,
        portalId,
        digest: `d-${portalId}`,
        createdAt: 1,
      });
      await stores.leases.acquireLease(portalId, 'owner', 60_000);
    }
    await stores.portals.markUninstalled('gone', 2_000);
    await stores.portals.markUninstalled('back', 2_000);
    await install('back', 2_500);
    expect(await stores.portals.purgeUninstalled(1_500)).toEqual([]);
    expect(await stores.portals.purgeUninstalled(3_000)).toEqual(['gone']);
    expect(await stores.portals.findPortal('gone')).toBeUndefined();
    expect(await stores.calls.findCall('gone', 'gone-call')).toBeUndefined();
    expect(await stores.tokens.findTokens('gone')).toBeUndefined();
    expect(await stores.portals.findPbxToken('d-gone')).toBeUndefined();
    // A new lease of the deleted portal starts again at epoch 1: its row went too.
    expect(await stores.leases.acquireLease('gone', 'other', 60_000)).toMatchObject({ epoch: 1 });
    for (const portalId of ['kept', 'back']) {
      expect(await stores.portals.findPortal(portalId)).toMatchObject({ status: 'active' });
      expect(await stores.calls.findCall(portalId, `${portalId}-call`)).toBeDefined();
      expect(await stores.tokens.findTokens(portalId)).toMatchObject({ portalId });
      expect(await stores.portals.findPbxToken(`d-${portalId}`)).toMatchObject({ portalId });
    }
  });

  it('never purges a portal installed again while the purge runs: the reinstall keeps its record and tokens', async () => {
    for (let round = 0; round < 20; round++) {
      const portalId = `race-${round}`;
      await install(portalId, 1_000);
      await storeCall(portalId, `${portalId}-call`);
      await stores.portals.markUninstalled(portalId, 2_000);
      // The purge (due: uninstalled before 3 000) and the reinstall race; either order must end installed.
      const [, reinstalled] = await Promise.all([
        stores.portals.purgeUninstalled(3_000),
        install(portalId, 4_000 + round),
      ]);
      expect(reinstalled.status).toBe('active');
      expect(await stores.portals.findPortal(portalId)).toMatchObject({ status: 'active' });
      expect(await stores.tokens.findTokens(portalId)).toMatchObject({
        refreshToken: `refresh-${portalId}-${4_000 + round}`,
      });
    }
  });
});
