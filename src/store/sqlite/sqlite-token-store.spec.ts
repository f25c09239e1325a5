import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PortalTokens } from '../token-store';
import { SqliteDatabase } from './sqlite-database';
import { SqliteTokenStore } from './sqlite-token-store';

const PORTAL = 'portal.example.com';
const T0 = 1_800_000_000_000;

const grant = (suffix: string, extra: Partial<PortalTokens> = {}): PortalTokens => ({
  portalId: PORTAL,
  memberId: 'member-1',
  domain: PORTAL,
  clientEndpoint: `https://${PORTAL}/rest/`,
  accessToken: `access-${suffix}`,
  refreshToken: `refresh-${suffix}`,
  accessExpiresAt: T0 + 3600_000,
  obtainedAt: T0,
  ...extra,
});

const refreshed = (suffix: string) => ({
  accessToken: `access-${suffix}`,
  refreshToken: `refresh-${suffix}`,
  accessExpiresAt: T0 + 7200_000,
  obtainedAt: T0 + 3600_000,
});

/** Two connections to one file stand for two replicas. */
describe('SqliteTokenStore', () => {
  let dir: string;
  let databases: SqliteDatabase[];
  let replicaA: SqliteTokenStore;
  let replicaB: SqliteTokenStore;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'token-store-'));
    databases = [
      new SqliteDatabase(join(dir, 'bridge.sqlite')),
      new SqliteDatabase(join(dir, 'bridge.sqlite')),
    ];
    [replicaA, replicaB] = databases.map((database) => new SqliteTokenStore(database));
  });
  afterEach(() => {
    databases.forEach((database) => database.close());
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives the refresh lease to one replica at a time, and the pair it commits to everyone', async () => {
    await replicaA.saveGrant(grant('1', { applicationToken: 'app-token' }));
    const claimed = await replicaA.claimRefresh(PORTAL, 'access-1', 'a', T0, 10_000);
    expect(claimed?.refreshToken).toBe('refresh-1');
    expect(await replicaB.claimRefresh(PORTAL, 'access-1', 'b', T0 + 1, 10_000)).toBeUndefined();

    expect(await replicaA.commitRefresh(PORTAL, 'a', refreshed('2'))).toBe(true);
    expect(await replicaB.findTokens(PORTAL)).toMatchObject({
      accessToken: 'access-2',
      refreshToken: 'refresh-2',
      applicationToken: 'app-token',
      clientEndpoint: `https://${PORTAL}/rest/`,
    });
    // The pair it waited for is gone: nothing left to refresh.
    expect(await replicaB.claimRefresh(PORTAL, 'access-1', 'b', T0 + 2, 10_000)).toBeUndefined();
  });

  it('lets another replica take an expired lease, and fences the late commit of the old holder', async () => {
    await replicaA.saveGrant(grant('1'));
    await replicaA.claimRefresh(PORTAL, 'access-1', 'a', T0, 10_000);
    expect(await replicaB.claimRefresh(PORTAL, 'access-1', 'b', T0 + 10_000, 10_000)).toBeDefined();
    expect(await replicaA.commitRefresh(PORTAL, 'a', refreshed('late'))).toBe(false);
    expect(await replicaB.commitRefresh(PORTAL, 'b', refreshed('2'))).toBe(true);
    expect((await replicaA.findTokens(PORTAL))?.accessToken).toBe('access-2');
  });

  it('lets a new install win over a refresh in flight', async () => {
    await replicaA.saveGrant(grant('1'));
    await replicaA.claimRefresh(PORTAL, 'access-1', 'a', T0, 10_000);
    await replicaB.saveGrant(grant('installed'));
    expect(await replicaA.commitRefresh(PORTAL, 'a', refreshed('2'))).toBe(false);
    expect((await replicaA.findTokens(PORTAL))?.accessToken).toBe('access-installed');
  });

  it('marks a refused pair only while it is still the stored one; a new grant clears the mark', async () => {
    await replicaA.saveGrant(grant('1'));
    await replicaB.saveGrant(grant('2'));
    await replicaA.requireReauthorisation(PORTAL, 'refused', 'refresh-1');
    expect((await replicaA.findTokens(PORTAL))?.reauthorisationReason).toBeUndefined();

    await replicaA.requireReauthorisation(PORTAL, 'refused', 'refresh-2');
    expect((await replicaA.findTokens(PORTAL))?.reauthorisationReason).toBe('refused');
    expect(await replicaA.claimRefresh(PORTAL, 'access-2', 'a', T0, 10_000)).toBeUndefined();

    await replicaA.saveGrant(grant('3'));
    expect((await replicaB.findTokens(PORTAL))?.reauthorisationReason).toBeUndefined();
  });

  it('takes an authorisation state once, and never after it expired', async () => {
    await replicaA.saveAuthorisationState('s1', PORTAL, T0 + 1000, T0);
    await replicaA.saveAuthorisationState('s2', PORTAL, T0 + 1000, T0);
    expect(await replicaB.takeAuthorisationState('s1', PORTAL, T0 + 999)).toBe(true);
    expect(await replicaA.takeAuthorisationState('s1', PORTAL, T0 + 999)).toBe(false);
    expect(await replicaA.takeAuthorisationState('s2', PORTAL, T0 + 1000)).toBe(false);
    expect(await replicaA.takeAuthorisationState('unknown', PORTAL, T0)).toBe(false);
    expect(await replicaA.takeAuthorisationState('s2', PORTAL, T0)).toBe(false);
  });
});
