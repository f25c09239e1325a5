import { SandboxPortal, SandboxTenant } from '../../sandbox';
import { TokenStore } from '../../src/store/token-store';
import { ADMIN_TOKEN, ended, eventually, started } from '../support/bridge-harness';
import { install, MultiBridge, pbxTokenFor, startMultiBridge, tempDir } from '../support/multi-harness';

/**
 * Issue 29 (docs/decisions/tenancy.md §5): a quiet portal costs its record, not its services. With
 * PORTAL_IDLE_SEC=1 each portal's runtime is dropped once idle, and its next call, lookup or portal event
 * builds it again, through HTTP, the sandbox's tenant portals and the real store.
 */
describe('idle portals: services dropped when quiet, built again by their work', () => {
  let sandbox: SandboxPortal;
  let bridge: MultiBridge;
  let temp: { dir: string; remove(): void };
  let quiet: SandboxTenant;
  let other: SandboxTenant;
  const pbx = new Map<string, string>();
  const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };

  const stateOf = async (tenant: SandboxTenant): Promise<string> =>
    (await bridge.http.get(`/v1/admin/portals/${tenant.memberId}`).set(admin)).body.runtime.state;
  const untilIdle = (tenant: SandboxTenant) =>
    eventually(async () => ((await stateOf(tenant)) === 'idle' ? true : undefined), 30_000);
  const post = (tenant: SandboxTenant, body: object) =>
    bridge.http
      .post('/v1/calls/events')
      .set('Authorization', `Bearer ${pbx.get(tenant.memberId)}`)
      .send(body);

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    quiet = sandbox.addPortal({ name: 'quiet', memberId: 'm-idle-quiet' });
    other = sandbox.addPortal({ name: 'other', memberId: 'm-idle-other' });
    temp = tempDir();
    bridge = await startMultiBridge(sandbox, temp.dir, { PORTAL_IDLE_SEC: '1' });
    for (const tenant of [quiet, other]) {
      expect(await install(tenant, bridge.url)).toBe(200);
      pbx.set(tenant.memberId, await pbxTokenFor(bridge, tenant.memberId));
    }
  });

  afterAll(async () => {
    await bridge?.close();
    await sandbox?.close();
    temp?.remove();
  });

  it('drops a quiet portal’s services and still counts it served', async () => {
    await untilIdle(quiet);
    await untilIdle(other);
    const ready = await bridge.http.get('/health/ready').set(admin);
    expect(ready.status).toBe(200);
    expect(ready.body.details.portals).toMatchObject({ portals: 2, runtimes: 0 });
    // Its record is still served: nothing of its services is shown until its next work builds them.
    const view = (await bridge.http.get(`/v1/admin/portals/${quiet.memberId}`).set(admin)).body;
    expect(view).toMatchObject({ status: 'active', events: null, delivery: null });
  });

  it('delivers a call posted to an idle portal, exactly once', async () => {
    await untilIdle(quiet);
    expect((await post(quiet, [started('idle-call-1'), ended('idle-call-1')])).status).toBe(202);
    const call = await eventually(async () => {
      const found = quiet.calls().find((one) => one.EXTERNAL_CALL_ID === 'idle-call-1');
      return found?.finished ? found : undefined;
    }, 30_000);
    expect(call.finished).toBeTruthy();
    expect(quiet.calls().filter((one) => one.EXTERNAL_CALL_ID === 'idle-call-1')).toHaveLength(1);
    // The other portal's services were not built for it.
    expect(other.calls()).toHaveLength(0);
  });

  it('answers a lookup on an idle portal from its CRM, not "paused"', async () => {
    await untilIdle(quiet);
    const lookup = await bridge.http
      .get('/v1/lookup?phone=%2B4915155500099')
      .set('Authorization', `Bearer ${pbx.get(quiet.memberId)}`);
    expect(lookup.status).toBe(200);
    expect(JSON.stringify(lookup.body)).not.toMatch(/paused/);
    expect(await stateOf(quiet)).toBe('serving');
  });

  it('handles a portal event posted to an idle portal', async () => {
    await untilIdle(quiet);
    const stored = await bridge.app.get(TokenStore).findTokens(quiet.memberId);
    const form = new URLSearchParams({
      event: 'ONCRMCONTACTUPDATE',
      'data[FIELDS][ID]': '1',
      'auth[member_id]': quiet.memberId,
      'auth[application_token]': String(stored?.applicationToken),
    });
    const posted = await fetch(`${bridge.url}/v1/portal/events`, { method: 'POST', body: form });
    expect(posted.status).toBe(200);
    const handled = await eventually(async () => {
      const { body } = await bridge.http.get(`/v1/admin/portal-events?portal=${quiet.memberId}`).set(admin);
      const events = (body as { events: { event: string; state: string }[] }).events;
      const event = events.find((one) => one.event === 'ONCRMCONTACTUPDATE');
      return event && event.state !== 'pending' ? event : undefined;
    }, 30_000);
    expect(handled.state).toBe('processed');
  });
});
