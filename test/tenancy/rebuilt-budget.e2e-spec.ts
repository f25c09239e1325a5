import { SandboxPortal, SandboxTenant } from '../../sandbox';
import { PortalRegistry } from '../../src/tenancy/portal-registry';
import { ADMIN_TOKEN, ended, eventually, started } from '../support/bridge-harness';
import { install, MultiBridge, pbxTokenFor, startMultiBridge, tempDir } from '../support/multi-harness';

const CALLS = 500;

/**
 * A portal's settings changed while its delivery fills the portal's bucket: its services are rebuilt, and
 * the new request budget goes on from the old one's level (the portal's bucket did not empty with them),
 * so the new services' first requests draw no 503. Through HTTP, the sandbox's tenant portal (bucket 10,
 * 2 a second) and the real store.
 */
describe('a portal rebuilt in the middle of a backlog', () => {
  let sandbox: SandboxPortal;
  let bridge: MultiBridge;
  let temp: { dir: string; remove(): void };
  let alpha: SandboxTenant;
  let token: string;

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    alpha = sandbox.addPortal({ name: 'alpha', rateLimitRps: 2, rateBurst: 10 });
    temp = tempDir('bridge-rebuilt-budget-');
    bridge = await startMultiBridge(sandbox, temp.dir, { B24_RATE_BURST: '10', B24_RATE_LIMIT_RPS: '2' });
    expect(await install(alpha, bridge.url)).toBe(200);
    token = await pbxTokenFor(bridge, alpha.memberId);
  });
  afterAll(async () => {
    await bridge?.close();
    await sandbox?.close();
    temp?.remove();
  });

  it('keeps to the bucket across the rebuild: every call delivered, no 503', async () => {
    const run = Date.now();
    const events = Array.from({ length: CALLS }, (_, n) => [
      started(`rebuilt-${run}-${n}`, { phoneNumber: `+4930${String(5000000 + n)}` }),
      ended(`rebuilt-${run}-${n}`),
    ]).flat();
    for (let offset = 0; offset < events.length; offset += 500) {
      const posted = await bridge.http
        .post('/v1/calls/events')
        .set('Authorization', `Bearer ${token}`)
        .send(events.slice(offset, offset + 500));
      expect(posted.status).toBe(202);
    }
    // The burst is spent and delivery goes at the drain rate: the portal's bucket is full.
    const since = Date.now();
    await eventually(
      async () =>
        alpha.requests(since).filter((entry) => entry.method === 'batch').length >= 12 ? true : undefined,
      30_000,
    );
    const runtimes = bridge.app.get(PortalRegistry);
    const before = runtimes.get(alpha.memberId);
    const patched = await bridge.http
      .patch(`/v1/admin/portals/${alpha.memberId}`)
      .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      .send({ defaultCountry: 'AT' });
    expect(patched.status).toBe(200);
    await eventually(async () => {
      const now = runtimes.get(alpha.memberId);
      return now && now !== before ? true : undefined;
    });
    await eventually(
      async () =>
        alpha.calls().filter((call) => call.EXTERNAL_CALL_ID.startsWith(`rebuilt-${run}-`) && call.finished)
          .length === CALLS
          ? true
          : undefined,
      120_000,
    );
    expect(alpha.requests(since).filter((entry) => entry.status === 503)).toEqual([]);
  });
});
