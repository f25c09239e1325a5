import { Stores } from '../../../src/store/store.module';
import { PortalTokens, TokenStore } from '../../../src/store/token-store';
import { eventually } from '../../support/bridge-harness';
import { TEST_ENGINES, TestEngine } from '../../support/test-database';
import { openEngine } from './engines';

const PORTAL = 'portal.example.com';
/** Now: PostgreSQL times refresh leases by its own clock, SQLite by the caller's. */
const T0 = Date.now();

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

/** OAuth tokens, the same on both engines: two stores on one database stand for two replicas. */
describe.each(TEST_ENGINES)('TokenStore (%s)', (_name, engineOf) => {
  let engine: TestEngine;
  let opened: Stores[];
  let replicaA: TokenStore;
  let replicaB: TokenStore;

  beforeEach(async () => {
    engine = engineOf();
    opened = [await openEngine(engine), await openEngine(engine)];
    [replicaA, replicaB] = opened.map((stores) => stores.tokens);
  });
  afterEach(async () => {
    for (const stores of opened) await stores.calls.close();
    await engine.drop();
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
    // A lease of 1 ms, run out by the time the next claim looks (whoever's clock times it).
    await replicaA.claimRefresh(PORTAL, 'access-1', 'a', Date.now(), 1);
    // Claimed once that lease has run out: the wait is on the lease, not on a guessed time.
    expect(
      await eventually(() => replicaB.claimRefresh(PORTAL, 'access-1', 'b', Date.now(), 10_000)),
    ).toBeDefined();
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
