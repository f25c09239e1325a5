import { SandboxPortal, SandboxTenant } from '../../sandbox';
import { PortalStore } from '../../src/store/portal-store';
import { TokenStore } from '../../src/store/token-store';
import { ADMIN_TOKEN, ended, eventually, started } from '../support/bridge-harness';
import { wavFile } from '../recordings/recording-server';
import { inboundCall } from '../tasks/task-support';
import {
  install,
  MultiBridge,
  pbxTokenFor,
  startMultiBridge,
  tempDir,
  uninstall,
} from '../support/multi-harness';

/**
 * docs/API.md through HTTP: two portals install one bridge (`B24_APP_MODE=multi`); each PBX token reaches its
 * own portal only; one portal's uninstall, outage or refused tokens leave the other untouched.
 */
describe('two portals in one deployment', () => {
  let sandbox: SandboxPortal;
  let bridge: MultiBridge;
  let temp: { dir: string; remove(): void };
  let alpha: SandboxTenant;
  let beta: SandboxTenant;
  let alphaToken: string;
  let betaToken: string;

  const post = (token: string, body: object) =>
    bridge.http.post('/v1/calls/events').set('Authorization', `Bearer ${token}`).send(body);
  const status = (token: string, callId: string) =>
    bridge.http.get(`/v1/calls/${callId}`).set('Authorization', `Bearer ${token}`);
  const lookup = (token: string, phone: string) =>
    bridge.http.get(`/v1/lookup?phone=${encodeURIComponent(phone)}`).set('Authorization', `Bearer ${token}`);
  const admin = () => ({ Authorization: `Bearer ${ADMIN_TOKEN}` });
  const externalIds = (tenant: SandboxTenant) => tenant.calls().map((call) => call.EXTERNAL_CALL_ID);
  const finishedOn = (tenant: SandboxTenant, prefix: string, count: number) =>
    eventually(async () => {
      const mine = tenant.calls().filter((call) => call.EXTERNAL_CALL_ID?.startsWith(prefix));
      return mine.length === count && mine.every((call) => call.finished) ? mine : undefined;
    }, 30_000);

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    alpha = sandbox.addPortal({ name: 'alpha' });
    beta = sandbox.addPortal({ name: 'beta', rateLimitRps: 5, rateBurst: 250 });
    temp = tempDir();
    bridge = await startMultiBridge(sandbox, temp.dir, { LOG_LEVEL: process.env.DEBUG_LOG ?? 'error' });
    expect(await install(alpha, bridge.url)).toBe(200);
    expect(await install(beta, bridge.url)).toBe(200);
    alphaToken = await pbxTokenFor(bridge, alpha.memberId);
    betaToken = await pbxTokenFor(bridge, beta.memberId);
  });

  afterAll(async () => {
    await bridge?.close();
    await sandbox?.close();
    temp?.remove();
  });

  it('keeps a portal record per install, listed and read behind the admin token only', async () => {
    const list = await bridge.http.get('/v1/admin/portals').set(admin());
    expect(list.status).toBe(200);
    const ids = list.body.portals.map((portal: { portalId: string }) => portal.portalId);
    expect(ids.sort()).toEqual([alpha.memberId, beta.memberId].sort());
    const one = await bridge.http.get(`/v1/admin/portals/${alpha.memberId}`).set(admin());
    expect(one.body).toMatchObject({
      portalId: alpha.memberId,
      domain: alpha.domain,
      clientEndpoint: alpha.restUrl,
      status: 'active',
      authorisation: { state: 'authorised' },
    });
    // A PBX token is no admin token, not even for its own portal.
    for (const path of ['/v1/admin/portals', `/v1/admin/portals/${alpha.memberId}`]) {
      const refused = await bridge.http.get(path).set('Authorization', `Bearer ${alphaToken}`);
      expect(refused.status).toBe(401);
    }
    const patch = await bridge.http
      .patch(`/v1/admin/portals/${beta.memberId}/pbx-tokens`)
      .set('Authorization', `Bearer ${betaToken}`)
      .send({});
    expect(patch.status).toBe(401);
    // The token list never shows a token again.
    const tokens = await bridge.http.get(`/v1/admin/portals/${alpha.memberId}/pbx-tokens`).set(admin());
    expect(tokens.body.tokens).toHaveLength(1);
    expect(JSON.stringify(tokens.body)).not.toContain(alphaToken);
    // Stored as a digest only.
    const stored = await bridge.app.get(PortalStore).listPbxTokens(alpha.memberId);
    expect(JSON.stringify(stored)).not.toContain(alphaToken);
  });

  it("delivers each PBX's calls to its own portal, and answers each PBX about its own calls only", async () => {
    expect((await post(alphaToken, [started('a-1'), ended('a-1')])).status).toBe(202);
    expect((await post(betaToken, [started('b-1'), ended('b-1')])).status).toBe(202);
    await finishedOn(alpha, 'a-1', 1);
    await finishedOn(beta, 'b-1', 1);
    expect(externalIds(alpha)).not.toContain('b-1');
    expect(externalIds(beta)).not.toContain('a-1');
    expect(
      (
        await eventually(async () => {
          const answer = await status(alphaToken, 'a-1');
          return answer.body.state === 'finished' ? answer : undefined;
        })
      ).status,
    ).toBe(200);
    // The other portal's call does not exist for this PBX.
    expect((await status(alphaToken, 'b-1')).status).toBe(404);
    expect((await status(betaToken, 'a-1')).status).toBe(404);
    // The same PBX call id on two portals is two calls.
    expect((await post(betaToken, [started('a-1'), ended('a-1')])).body).toEqual({
      accepted: 2,
      duplicates: 0,
    });
    await finishedOn(beta, 'a-1', 1);
  });

  it("looks a number up in the PBX's own portal's CRM", async () => {
    const phone = '+4915155500001';
    const added = await fetch(`${alpha.webhookUrl}crm.contact.add`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        fields: { NAME: 'Only', LAST_NAME: 'Alpha', PHONE: [{ VALUE: phone, VALUE_TYPE: 'WORK' }] },
      }),
    });
    expect(added.status).toBe(200);
    const inAlpha = await lookup(alphaToken, phone);
    expect(inAlpha.body.match).toMatchObject({ entityType: 'CONTACT', name: 'Only Alpha' });
    const inBeta = await lookup(betaToken, phone);
    expect(inBeta.status).toBe(200);
    expect(inBeta.body.match).toBeNull();
  });

  it('takes settings per portal, refuses bad ones with a 400 naming the field', async () => {
    const bad = await bridge.http
      .patch(`/v1/admin/portals/${alpha.memberId}`)
      .set(admin())
      .send({ defaultUserId: 'x', nonsense: 1 });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('defaultUserId');
    expect(JSON.stringify(bad.body)).toContain('nonsense');
    const ok = await bridge.http
      .patch(`/v1/admin/portals/${alpha.memberId}`)
      .set(admin())
      .send({ defaultUserId: 2, rateLimitRps: 3 });
    expect(ok.status).toBe(200);
    expect(ok.body.settings).toEqual({ defaultUserId: 2, rateLimitRps: 3 });
    const other = await bridge.http.get(`/v1/admin/portals/${beta.memberId}`).set(admin());
    expect(other.body.settings).toEqual({});
    const cleared = await bridge.http
      .patch(`/v1/admin/portals/${alpha.memberId}`)
      .set(admin())
      .send({ defaultUserId: null, rateLimitRps: null });
    expect(cleared.body.settings).toEqual({});
    expect((await bridge.http.get('/v1/admin/portals/nobody').set(admin())).status).toBe(404);
  });

  it("reads national numbers in each portal's own country and aggregates metrics over portals", async () => {
    const patched = await bridge.http
      .patch(`/v1/admin/portals/${beta.memberId}`)
      .set(admin())
      .send({ defaultCountry: 'AT' });
    expect(patched.status).toBe(200);
    // Settings reach the portal's runtime at the next read of the portal list (at once on this replica).
    const national = (callId: string) => [started(callId, { phoneNumber: '0664 1234567' }), ended(callId)];
    expect((await post(alphaToken, national('a-country'))).status).toBe(202);
    expect((await post(betaToken, national('b-country'))).status).toBe(202);
    const [inAlpha] = await finishedOn(alpha, 'a-country', 1);
    const [inBeta] = await finishedOn(beta, 'b-country', 1);
    expect(inAlpha.PHONE_NUMBER).toBe('+496641234567');
    expect(inBeta.PHONE_NUMBER).toBe('+436641234567');
    await bridge.http.patch(`/v1/admin/portals/${beta.memberId}`).set(admin()).send({ defaultCountry: null });
    const { text } = await bridge.http.get('/metrics');
    expect(text).toMatch(/bridge_queue_depth\{portal="all"\} \d+/);
    expect(text).not.toContain(alpha.memberId);
    expect(text).not.toContain(beta.memberId);
  });

  it("takes a PBX's recording for its own portal's call only, and makes missed-call tasks where the portal asked", async () => {
    expect((await post(alphaToken, [started('a-rec'), ended('a-rec')])).status).toBe(202);
    const push = (token: string, callId: string) =>
      bridge.http
        .put(`/v1/calls/${callId}/recording`)
        .set('Authorization', `Bearer ${token}`)
        .set('Content-Type', 'audio/wav')
        .send(wavFile(2000));
    // Another portal's PBX cannot attach anything to this call: for it the call does not exist.
    expect((await push(betaToken, 'a-rec')).status).toBe(404);
    expect((await push(alphaToken, 'a-rec')).status).toBe(202);
    await eventually(async () => {
      const [call] = alpha.calls().filter((c) => c.EXTERNAL_CALL_ID === 'a-rec');
      return call?.records.length ? call : undefined;
    }, 30_000);

    // Missed-call tasks are off for the deployment; beta turns them on for itself.
    const on = await bridge.http
      .patch(`/v1/admin/portals/${beta.memberId}`)
      .set(admin())
      .send({ missedCallTask: true });
    expect(on.status).toBe(200);
    expect(
      (await post(alphaToken, inboundCall('a-miss', '+49 30 555-0142', 'missed') as object[])).status,
    ).toBe(202);
    expect(
      (await post(betaToken, inboundCall('b-miss', '+49 30 555-0142', 'missed') as object[])).status,
    ).toBe(202);
    await eventually(async () => {
      const answer = await status(betaToken, 'b-miss');
      return answer.body.missedTask?.state === 'created' ? answer : undefined;
    }, 30_000);
    expect(
      beta.inspection.tasks().filter((task) => String(task.title).startsWith('Missed call')),
    ).toHaveLength(1);
    await finishedOn(alpha, 'a-miss', 1);
    expect((await status(alphaToken, 'a-miss')).body.missedTask).toBeUndefined();
    expect(
      alpha.inspection.tasks().filter((task) => String(task.title).startsWith('Missed call')),
    ).toHaveLength(0);
    await bridge.http.patch(`/v1/admin/portals/${beta.memberId}`).set(admin()).send({ missedCallTask: null });
  });

  it('refuses a revoked PBX token at once', async () => {
    const token = await pbxTokenFor(bridge, beta.memberId);
    expect((await status(token, 'b-1')).status).toBe(200);
    const { body } = await bridge.http.get(`/v1/admin/portals/${beta.memberId}/pbx-tokens`).set(admin());
    const newest = body.tokens[body.tokens.length - 1].id as string;
    const revoked = await bridge.http
      .delete(`/v1/admin/portals/${beta.memberId}/pbx-tokens/${newest}`)
      .set(admin());
    expect(revoked.status).toBe(204);
    expect((await status(token, 'b-1')).status).toBe(401);
    expect((await status(betaToken, 'b-1')).status).toBe(200);
  });

  it('pauses an uninstalled portal and resumes it on reinstall, leaving the other untouched', async () => {
    const tokens = bridge.app.get(TokenStore);
    const betaBefore = await tokens.findTokens(beta.memberId);
    expect(await uninstall(alpha, bridge.url)).toBe(200);
    const paused = await bridge.http.get(`/v1/admin/portals/${alpha.memberId}`).set(admin());
    expect(paused.body).toMatchObject({ status: 'uninstalled' });
    // The PBX is still heard: its calls wait, stored, for the portal to come back.
    expect((await post(alphaToken, [started('a-2'), ended('a-2')])).status).toBe(202);
    expect((await post(betaToken, [started('b-2'), ended('b-2')])).status).toBe(202);
    await finishedOn(beta, 'b-2', 1);
    expect(externalIds(alpha)).not.toContain('a-2');
    expect((await lookup(alphaToken, '+4915155500001')).body).toMatchObject({ match: null });
    expect(await install(alpha, bridge.url)).toBe(200);
    await finishedOn(alpha, 'a-2', 1);
    const betaAfter = await tokens.findTokens(beta.memberId);
    expect(betaAfter?.refreshToken).toBe(betaBefore?.refreshToken);
    expect(betaAfter?.applicationToken).toBe(betaBefore?.applicationToken);
  });

  it('refuses an install whose tokens the OAuth server does not confirm for the posted portal', async () => {
    const form = new URLSearchParams({
      event: 'ONAPPINSTALL',
      'auth[access_token]': 'forged',
      'auth[refresh_token]': 'forged',
      'auth[domain]': beta.domain,
      'auth[member_id]': beta.memberId,
      'auth[client_endpoint]': 'http://127.0.0.1:9/rest/',
      'auth[application_token]': 'forged',
    });
    const forged = await fetch(`${bridge.url}/oauth/install`, { method: 'POST', body: form });
    expect(forged.status).toBe(403);
    const record = await bridge.app.get(PortalStore).findPortal(beta.memberId);
    expect(record?.clientEndpoint).toBe(beta.restUrl);
  });

  it('keeps delivering to one portal while the other is down or refuses its tokens', async () => {
    alpha.injectFault({ kind: 'outage' });
    const bodies = (prefix: string, count: number) =>
      Array.from({ length: count }, (_, index) => [
        started(`${prefix}-${index}`),
        ended(`${prefix}-${index}`),
      ]).flat();
    expect((await post(alphaToken, bodies('down', 40))).status).toBe(202);
    expect((await post(betaToken, bodies('up', 40))).status).toBe(202);
    await finishedOn(beta, 'up-', 40);
    expect(alpha.calls().filter((call) => call.EXTERNAL_CALL_ID?.startsWith('down-'))).toHaveLength(0);
    alpha.clearFaults();
    await finishedOn(alpha, 'down-', 40);

    // Tokens refused for good: that portal pauses for re-authorisation, the other goes on.
    alpha.revokeApp();
    expect((await post(alphaToken, bodies('refused', 5))).status).toBe(202);
    expect((await post(betaToken, bodies('still', 20))).status).toBe(202);
    await finishedOn(beta, 'still-', 20);
    const health = await eventually(async () => {
      const answer = await bridge.http.get(`/v1/admin/portals/${alpha.memberId}`).set(admin());
      return answer.body.authorisation?.state === 'needs-reauthorisation' ? answer.body : undefined;
    });
    expect(health.queue.depth).toBeGreaterThan(0);
    const ready = await bridge.http.get('/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body.details.portals).toMatchObject({ mode: 'multi', portals: 2 });
  });
});
