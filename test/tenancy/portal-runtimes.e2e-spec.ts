import axios from 'axios';
import Database from 'better-sqlite3';
import { Client } from 'pg';
import { SandboxPortal, SandboxTenant } from '../../sandbox';
import { loadConfig } from '../../src/config/app-config';
import { openStores } from '../../src/store/store.module';
import { TokenStore } from '../../src/store/token-store';
import { AmiServer } from '../support/ami-server';
import { ADMIN_TOKEN, ended, eventually, started } from '../support/bridge-harness';
import {
  install,
  MultiBridge,
  multiEnv,
  pbxTokenFor,
  startMultiBridge,
  tempDir,
} from '../support/multi-harness';
import { testDatabaseUrl } from '../support/test-database';
import { RecordingServer, REC_PASSWORD, REC_USER, wavFile } from '../recordings/recording-server';

const AMI_SECRET = 'runtime-ami-s3cret';
const DIAL_PASSWORD = 'dial-pa55-in-url';
/** A record an older version accepted: `{port}` is no placeholder a click fills, so no dialer can be built. */
const OLD_BAD_DIAL = { DIAL_MODE: 'http', DIAL_URL: 'http://pbx.local:{port}/dial?ext={extension}' };

/**
 * Issue 26, findings 7, 8, 10, 17, 20 (per-portal DIAL_MATCH_SEC, install as one write), through HTTP, the
 * sandbox's tenant portals and the real store: a portal whose services cannot be built, or whose store read
 * fails once while they are rebuilt, stays that portal's trouble (its health flag); every other portal,
 * including those sorting after it, is delivered, looked up and hears its events. Sandbox user 2 = ext 101.
 */
describe('portal runtimes: one portal’s trouble stays its own', () => {
  let sandbox: SandboxPortal;
  let bridge: MultiBridge;
  let temp: { dir: string; remove(): void };
  let ami: AmiServer;
  let files: RecordingServer;
  /** Sorted by id: `m1-bad` first (its stored dial settings cannot be built), `m0-broken` before it all. */
  let bad: SandboxTenant;
  let second: SandboxTenant;
  let third: SandboxTenant;
  const pbx = new Map<string, string>();
  const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };

  const portalView = async (portalId: string) =>
    (await bridge.http.get(`/v1/admin/portals/${portalId}`).set(admin)).body;
  const post = (tenant: SandboxTenant, body: object) =>
    bridge.http
      .post('/v1/calls/events')
      .set('Authorization', `Bearer ${pbx.get(tenant.memberId)}`)
      .send(body);
  const callStatus = async (tenant: SandboxTenant, callId: string) =>
    (await bridge.http.get(`/v1/calls/${callId}`).set('Authorization', `Bearer ${pbx.get(tenant.memberId)}`))
      .body;
  const finishedOn = (tenant: SandboxTenant, callId: string) =>
    eventually(async () => {
      const call = tenant.calls().find((one) => one.EXTERNAL_CALL_ID === callId);
      return call?.finished ? call : undefined;
    }, 30_000);
  const portalEvent = async (tenant: SandboxTenant, event: string, data: Record<string, string>) => {
    const stored = await bridge.app.get(TokenStore).findTokens(tenant.memberId);
    const form = new URLSearchParams({
      event,
      ...Object.fromEntries(Object.entries(data).map(([key, value]) => [`data[${key}]`, value])),
      'auth[member_id]': tenant.memberId,
      'auth[application_token]': String(stored?.applicationToken),
    });
    return fetch(`${bridge.url}/v1/portal/events`, { method: 'POST', body: form });
  };
  const click = async (tenant: SandboxTenant, phone: string): Promise<string> => {
    const { data } = await axios.post(`${tenant.url}/_sandbox/click`, { phone, userId: 2 });
    return (data as { CALL_ID: string }).CALL_ID;
  };

  beforeAll(async () => {
    ami = await AmiServer.start('crm-bridge', AMI_SECRET);
    files = await RecordingServer.start();
    sandbox = await SandboxPortal.start();
    bad = sandbox.addPortal({ name: 'bad', memberId: 'm1-bad' });
    second = sandbox.addPortal({ name: 'second', memberId: 'm2-second' });
    third = sandbox.addPortal({ name: 'third', memberId: 'm3-third' });
    temp = tempDir();
    bridge = await startMultiBridge(sandbox, temp.dir, { DIAL_TIMEOUT_SEC: '10' });
    for (const tenant of [bad, second, third]) {
      expect(await install(tenant, bridge.url)).toBe(200);
      pbx.set(tenant.memberId, await pbxTokenFor(bridge, tenant.memberId));
    }
    await bridge.close();
    // Straight into the store, as an older version accepted them: dial settings no dialer can be built
    // from, and a portal record whose endpoint is no URL (its runtime's constructor throws).
    const stores = await openStores({
      databaseUrl: testDatabaseUrl(temp.dir),
      poolSize: 2,
      retentionMs: 86_400_000,
      retentionDays: 1,
      portalRetentionMs: 86_400_000,
    });
    try {
      await stores.portals.updateSettings(bad.memberId, { dial: OLD_BAD_DIAL }, Date.now());
      const now = Date.now();
      await stores.portals.saveInstall({
        portalId: 'm0-broken',
        domain: 'broken.example.com',
        clientEndpoint: 'not a url',
        now,
        grant: {
          portalId: 'm0-broken',
          memberId: 'm0-broken',
          domain: 'broken.example.com',
          accessToken: 'a',
          refreshToken: 'r',
          accessExpiresAt: now + 3_600_000,
          obtainedAt: now,
        },
      });
    } finally {
      await stores.calls.close();
    }
    bridge = await startMultiBridge(sandbox, temp.dir, { DIAL_TIMEOUT_SEC: '10' });
  });

  afterAll(async () => {
    await bridge?.close();
    await sandbox?.close();
    await ami?.close();
    await files?.close();
    temp?.remove();
  });

  it('serves every other portal when one portal’s runtime cannot be built, and flags that one', async () => {
    // Every portal, those sorting after the broken ones included, is delivered, looked up, hears its events.
    for (const tenant of [bad, second, third]) {
      const callId = `after-restart-${tenant.memberId}`;
      expect((await post(tenant, [started(callId), ended(callId)])).status).toBe(202);
      await finishedOn(tenant, callId);
      const lookup = await bridge.http
        .get('/v1/lookup?phone=%2B4915155500099')
        .set('Authorization', `Bearer ${pbx.get(tenant.memberId)}`);
      expect(lookup.status).toBe(200);
      expect(JSON.stringify(lookup.body)).not.toMatch(/paused/);
      const event = await portalEvent(tenant, 'ONCRMCONTACTUPDATE', { 'FIELDS][ID': '1' });
      expect(event.status).toBe(200);
    }
    // The runtime that threw is that portal's flag, with a reason and no secret; the other portals serve.
    const broken = await portalView('m0-broken');
    expect(broken.runtime).toMatchObject({ state: 'failed', failure: { reason: expect.any(String) } });
    expect(broken.runtime.failure.attempts).toBeGreaterThanOrEqual(1);
    // The stored dial settings no dialer can be built from: click-to-call off, said in the portal's health.
    const badView = await portalView(bad.memberId);
    expect(badView.runtime.state).toBe('serving');
    expect(badView.dialer).toBeNull();
    expect(badView.runtime.problems.join(' ')).toContain('DIAL_URL');
    for (const tenant of [second, third]) {
      expect((await portalView(tenant.memberId)).runtime.state).toBe('serving');
    }
    const ready = await bridge.http.get('/health/ready').set(admin);
    expect(JSON.stringify(ready.body)).toMatch(/"failedPortals":1/);
  });

  it('refuses a DIAL_URL no dialer can be built from, or one carrying user:password, with a 400 naming it', async () => {
    const before = await portalView(second.memberId);
    const unbuildable = await bridge.http
      .patch(`/v1/admin/portals/${second.memberId}`)
      .set(admin)
      .send({ dial: OLD_BAD_DIAL });
    expect(unbuildable.status).toBe(400);
    expect(JSON.stringify(unbuildable.body)).toContain('dial.DIAL_URL');
    const withPassword = await bridge.http
      .patch(`/v1/admin/portals/${second.memberId}`)
      .set(admin)
      .send({ dial: { DIAL_MODE: 'http', DIAL_URL: `http://ops:${DIAL_PASSWORD}@127.0.0.1:9/dial` } });
    expect(withPassword.status).toBe(400);
    const text = JSON.stringify(withPassword.body);
    expect(text).toContain('DIAL_URL');
    expect(text).toContain('DIAL_AUTH');
    expect(text).not.toContain(DIAL_PASSWORD);
    // Nothing changed, the portal still serves.
    const after = await portalView(second.memberId);
    expect(after.settings).toEqual(before.settings);
    expect(after.runtime.state).toBe('serving');
    expect(JSON.stringify(after)).not.toContain(DIAL_PASSWORD);
    // The environment's DIAL_URL gets the same check at start-up, without repeating the password.
    for (const url of [`http://ops:${DIAL_PASSWORD}@127.0.0.1:9/dial`, OLD_BAD_DIAL.DIAL_URL]) {
      let message = '';
      try {
        loadConfig({ DIAL_MODE: 'http', DIAL_URL: url });
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toMatch(/DIAL_URL/);
      expect(message).not.toContain(DIAL_PASSWORD);
    }
  });

  it('keeps the old runtime serving when the store fails while a new one opens, flags it, then recovers and dials', async () => {
    const tokens = bridge.app.get(TokenStore);
    const real = tokens.findTokens.bind(tokens);
    let injected = 0;
    let failing = true;
    // Fault injection on the real store: the read a runtime's open makes fails (a dropped connection) until
    // released: the first attempt, and any retry before the release.
    tokens.findTokens = async (portalId: string) => {
      if (failing && portalId === third.memberId && /OAuthCredentials\.open/.test(new Error().stack ?? '')) {
        injected += 1;
        throw new Error('injected: connection terminated unexpectedly');
      }
      return real(portalId);
    };
    try {
      const patched = await bridge.http
        .patch(`/v1/admin/portals/${third.memberId}`)
        .set(admin)
        .send({ dial: { DIAL_MODE: 'ami', AMI_URL: ami.url() } });
      expect(patched.status).toBe(200);
      expect(injected).toBeGreaterThanOrEqual(1);
      // The failure is this portal's flag, without a secret; its previous services still serve it.
      const stale = await portalView(third.memberId);
      expect(stale.runtime).toMatchObject({
        state: 'stale',
        failure: { reason: expect.stringContaining('injected') },
      });
      expect(JSON.stringify(stale)).not.toContain(AMI_SECRET);
      expect(stale.dialer).toBeNull();
      expect((await post(third, [started('third-stale'), ended('third-stale')])).status).toBe(202);
      await finishedOn(third, 'third-stale');
      expect((await portalEvent(third, 'ONCRMCONTACTUPDATE', { 'FIELDS][ID': '2' })).status).toBe(200);
      // The store is back: a later sync rebuilds it, published with its dialer, no failure left.
      failing = false;
      const view = await eventually(async () => {
        const body = await portalView(third.memberId);
        return body.runtime.state === 'serving' && body.dialer ? body : undefined;
      }, 20_000);
      expect(view.runtime.failure).toBeUndefined();
      // Not half open: its events are bound, and a click rings its PBX.
      await eventually(async () =>
        (await portalView(third.memberId)).events?.boundEvents > 0 ? true : undefined,
      );
      const callId = await click(third, '+4930555000777');
      await eventually(async () => {
        const found = ami.originates().filter((action) => action.Variable === `CRM_CALL_ID=${callId}`);
        return found.length ? found : undefined;
      }, 20_000);
      // Its calls are still delivered.
      expect((await post(third, [started('third-after'), ended('third-after')])).status).toBe(202);
      await finishedOn(third, 'third-after');
    } finally {
      tokens.findTokens = real;
    }
  });

  it("uses each portal's own DIAL_MATCH_SEC to tie the PBX's call to a click", async () => {
    // Third's dial settings say 1 s; second has none (the deployment's 60 s).
    const patched = await bridge.http
      .patch(`/v1/admin/portals/${third.memberId}`)
      .set(admin)
      .send({ dial: { DIAL_MODE: 'ami', AMI_URL: ami.url(), DIAL_MATCH_SEC: '1' } });
    expect(patched.status).toBe(200);
    await eventually(async () => {
      const body = await portalView(third.memberId);
      return body.runtime.state === 'serving' && body.dialer ? body : undefined;
    });
    await eventually(async () =>
      (await portalView(second.memberId)).events?.boundEvents > 0 ? true : undefined,
    );
    await eventually(async () =>
      (await portalView(third.memberId)).events?.boundEvents > 0 ? true : undefined,
    );
    const phone = '+4930555000888';
    await click(third, phone);
    await click(second, phone);
    // Both clicks are stored before the PBX's calls come, 3 s later: past 1 s, within 60 s. The gap is the
    // case (DIAL_MATCH_SEC by the clock); a loaded machine only widens it, still within 60 s.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const outbound = (callId: string) => [
      started(callId, {
        direction: 'outbound',
        phoneNumber: phone,
        extension: '101',
        at: new Date().toISOString(),
      }),
    ];
    expect((await post(third, outbound('match-third'))).status).toBe(202);
    expect((await post(second, outbound('match-second'))).status).toBe(202);
    const secondStatus = await eventually(async () => {
      const body = await callStatus(second, 'match-second');
      return body.clickToCall ? body : undefined;
    });
    expect(secondStatus.clickToCall).toMatchObject({ matchedBy: 'click' });
    const thirdStatus = await callStatus(third, 'match-third');
    expect(thirdStatus.callId ?? 'match-third').toBe('match-third');
    expect(thirdStatus.clickToCall).toBeUndefined();
  });

  it("fetches a portal's recordings only from its own hosts, with its own credentials", async () => {
    // Multi mode refuses the deployment's recording hosts and credentials: they would serve every tenant.
    expect(() =>
      loadConfig(
        multiEnv(sandbox, temp.dir, {
          RECORDING_FETCH_HOSTS: `127.0.0.1:${files.port}`,
          RECORDING_FETCH_AUTH: `basic:${REC_USER}:${REC_PASSWORD}`,
        }),
      ),
    ).toThrow(/RECORDING_FETCH_HOSTS.*RECORDING_FETCH_AUTH/);
    // Second's PBX serves its files from `files`; third allows only another host.
    const own = await bridge.http
      .patch(`/v1/admin/portals/${second.memberId}`)
      .set(admin)
      .send({
        recordingFetch: { hosts: [`127.0.0.1:${files.port}`], auth: `basic:${REC_USER}:${REC_PASSWORD}` },
      });
    expect(own.status).toBe(200);
    expect(own.body.settings.recordingFetch).toEqual({ hosts: [`127.0.0.1:${files.port}`], authSet: true });
    expect(JSON.stringify(own.body)).not.toContain(REC_PASSWORD);
    expect(JSON.stringify(await portalView(second.memberId))).not.toContain(REC_PASSWORD);
    const other = await bridge.http
      .patch(`/v1/admin/portals/${third.memberId}`)
      .set(admin)
      .send({ recordingFetch: { hosts: ['127.0.0.1:1'] } });
    expect(other.status).toBe(200);
    const refused = await bridge.http
      .patch(`/v1/admin/portals/${third.memberId}`)
      .set(admin)
      .send({ recordingFetch: { hosts: ['not a host!'], auth: 'plain-secret' } });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain('recordingFetch.hosts');
    expect(JSON.stringify(refused.body)).not.toContain('plain-secret');
    await eventually(async () => {
      const views = await Promise.all([second, third].map((tenant) => portalView(tenant.memberId)));
      return views.every((view) => view.runtime.state === 'serving') ? true : undefined;
    });

    // Third's PBX names second's file (a guessable name): not downloaded with second's credentials.
    const stolen = files.serve('/rec/second-secret.wav', { file: wavFile(50_000, 7), type: 'audio/wav' });
    expect(
      (await post(third, [started('rec-third'), ended('rec-third', { recordingUrl: stolen })])).status,
    ).toBe(202);
    const thirdCall = await eventually(async () => {
      const body = await callStatus(third, 'rec-third');
      return body.state === 'finished' && ['attached', 'failed'].includes(body.recording) ? body : undefined;
    }, 30_000);
    expect(thirdCall.recordingDetail?.via).not.toBe('fetch');
    const thirdRecords = third.calls().find((call) => call.EXTERNAL_CALL_ID === 'rec-third')?.records ?? [];
    expect(thirdRecords.filter((record) => 'FILENAME' in record)).toEqual([]);

    // Second's own PBX naming its own file: downloaded with its credentials and attached to its call.
    const mine = files.serve('/rec/second-own.wav', { file: wavFile(50_000, 8), type: 'audio/wav' });
    expect(
      (await post(second, [started('rec-second'), ended('rec-second', { recordingUrl: mine })])).status,
    ).toBe(202);
    const secondCall = await eventually(async () => {
      const body = await callStatus(second, 'rec-second');
      return body.state === 'finished' && ['attached', 'failed'].includes(body.recording) ? body : undefined;
    }, 30_000);
    expect(secondCall).toMatchObject({ recording: 'attached', recordingDetail: { via: 'fetch' } });
  });

  it('stores an install as one write: a failure of either part leaves neither', async () => {
    const late = sandbox.addPortal({ name: 'late', memberId: 'm4-late' });
    const databaseUrl = testDatabaseUrl(temp.dir);
    for (const table of ['portals', 'portal_tokens']) {
      await withTrigger(databaseUrl, table, late.memberId, async () => {
        const status = await install(late, bridge.url);
        expect(status).not.toBe(200);
      });
      expect(await bridge.app.get(TokenStore).findTokens(late.memberId)).toBeUndefined();
      expect((await bridge.http.get(`/v1/admin/portals/${late.memberId}`).set(admin)).status).toBe(404);
    }
    expect(await install(late, bridge.url)).toBe(200);
    expect(await bridge.app.get(TokenStore).findTokens(late.memberId)).toMatchObject({
      portalId: late.memberId,
    });
    await eventually(async () =>
      (await portalView(late.memberId)).runtime.state === 'serving' ? true : undefined,
    );
  });
});

/** A database trigger that makes every insert of `portalId` into `table` fail while `work` runs. */
async function withTrigger(
  databaseUrl: string,
  table: string,
  portalId: string,
  work: () => Promise<void>,
): Promise<void> {
  if (databaseUrl.startsWith('sqlite:')) {
    const db = new Database(databaseUrl.slice('sqlite:'.length));
    db.exec(
      `CREATE TRIGGER fail_${table} BEFORE INSERT ON ${table} WHEN NEW.portal_id = '${portalId}'
       BEGIN SELECT RAISE(ABORT, 'injected: disk I/O error'); END`,
    );
    try {
      await work();
    } finally {
      db.exec(`DROP TRIGGER fail_${table}`);
      db.close();
    }
    return;
  }
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query(
    `CREATE FUNCTION fail_${table}() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN IF NEW.portal_id = '${portalId}' THEN RAISE EXCEPTION 'injected: disk I/O error'; END IF; RETURN NEW; END $$`,
  );
  await client.query(
    `CREATE TRIGGER fail_${table} BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION fail_${table}()`,
  );
  try {
    await work();
  } finally {
    await client.query(`DROP TRIGGER fail_${table} ON ${table}`);
    await client.query(`DROP FUNCTION fail_${table}()`);
    await client.end();
  }
}
