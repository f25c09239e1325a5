import { SandboxPortal } from '../../sandbox';
import { PortalStore } from '../../src/store/portal-store';
import { ADMIN_TOKEN } from '../support/bridge-harness';
import { install, MultiBridge, startMultiBridge, tempDir } from '../support/multi-harness';

/** B24_ALLOWED_DOMAINS narrows which portals may install the published application (docs/API.md). */
describe('B24_ALLOWED_DOMAINS with many portals', () => {
  let sandbox: SandboxPortal;
  let bridge: MultiBridge;
  let temp: { dir: string; remove(): void };

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    temp = tempDir();
    bridge = await startMultiBridge(sandbox, temp.dir, { B24_ALLOWED_DOMAINS: '*.customers.test' });
  });

  afterAll(async () => {
    await bridge?.close();
    await sandbox?.close();
    temp?.remove();
  });

  it('takes an install from a listed domain and refuses the others, storing nothing for them', async () => {
    const customer = sandbox.addPortal({ name: 'acme', domain: 'acme.customers.test' });
    const stranger = sandbox.addPortal({ name: 'stranger', domain: 'stranger.example.test' });
    expect(await install(customer, bridge.url)).toBe(200);
    expect(await install(stranger, bridge.url)).toBe(403);
    const portals = bridge.app.get(PortalStore);
    expect(await portals.findPortal(customer.memberId)).toMatchObject({
      status: 'active',
      domain: 'acme.customers.test',
    });
    expect(await portals.findPortal(stranger.memberId)).toBeUndefined();
    const list = await bridge.http.get('/v1/admin/portals').set('Authorization', `Bearer ${ADMIN_TOKEN}`);
    expect(list.body.portals.map((portal: { portalId: string }) => portal.portalId)).toEqual([
      customer.memberId,
    ]);
  });
});
