import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxPortal } from '../../sandbox';
import { PortalRegistry } from '../../src/tenancy/portal-registry';
import { SeededRuntime } from '../../src/tenancy/single-portal';
import { AmiDouble } from '../support/ami-double';
import {
  ADMIN_TOKEN,
  ended,
  eventually,
  Harness,
  PBX_TOKEN,
  started,
  startHarness,
} from '../support/bridge-harness';
import { callsByExternalId } from '../support/sandbox-inspect';
import { onPostgres } from '../support/test-database';

const AMI_SECRET = 'single-page-ami-s3cret';

/** The page's session, from the hidden field every form of its HTML carries. */
function sessionIn(html: string): string {
  const session = /name="session" value="([^"]+)"/.exec(html)?.[1];
  if (!session) throw new Error(`no session in the page:\n${html.slice(0, 500)}`);
  return session;
}

/**
 * Single-portal (webhook) mode, two bridges on one store (one SQLite file, or one PostgreSQL schema), as
 * two replicas: the page's settings are stored and take effect on the other replica without a restart
 * (its intake and its rebuilt runtime), PBX tokens created on the page are accepted beside PBX_TOKENS and
 * refused once revoked, and "test connection" logs in to a PBX. Everything through the page's own forms.
 */
describe(`the page in single-portal mode: stored settings, PBX tokens, test connection (${onPostgres ? 'PostgreSQL' : 'SQLite'})`, () => {
  let sandbox: SandboxPortal;
  let dir: string;
  let pbx: AmiDouble;
  let replicas: Harness[] = [];
  let seq = 0;
  const newId = (prefix: string) => `${prefix}-${Date.now()}-${++seq}`;

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    pbx = await AmiDouble.start('crm-single', AMI_SECRET);
    dir = mkdtempSync(join(tmpdir(), 'bridge-single-page-'));
    const env = { B24_LINE_NUMBER: 'env-line', DELIVERY_MAX_BACKOFF_SEC: '1' };
    replicas = [await startHarness(env, {}, { sandbox, dir }), await startHarness(env, {}, { sandbox, dir })];
  }, 60_000);

  afterAll(async () => {
    for (const replica of replicas) await replica.close();
    await pbx?.close();
    await sandbox?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const signIn = async (h: Harness) => {
    const response = await h.http.post('/app').type('form').send({ token: ADMIN_TOKEN, LANG: 'en' });
    expect(response.status).toBe(200);
    return sessionIn(response.text);
  };
  const postCall = (h: Harness, token: string, callId: string) =>
    h.http
      .post('/v1/calls/events')
      .set('Authorization', `Bearer ${token}`)
      .send([started(callId), ended(callId)]);
  const registered = (callId: string) =>
    eventually(async () => {
      const [call] = (await callsByExternalId(sandbox, callId)) as unknown as { LINE_NUMBER: string }[];
      return call;
    });

  it("a save on one replica's page takes effect on the other without a restart; clearing returns to the environment's", async () => {
    const [a, b] = replicas;
    const before = newId('env');
    expect((await postCall(b, PBX_TOKEN, before)).status).toBe(202);
    expect((await registered(before)).LINE_NUMBER).toBe('env-line');

    const session = await signIn(a);
    const saved = await a.http.post('/app/settings').type('form').send({
      session,
      defaultUserId: '',
      defaultCountry: 'AT',
      missedCallTask: '',
      lineNumber: 'page-line',
      DIAL_MODE: '',
    });
    expect(saved.status).toBe(200);
    expect(saved.text).toContain('Saved.');
    // The other replica reads the stored record at its next sync and rebuilds its runtime from it.
    const seededB = b.app.get(SeededRuntime);
    const runtimeB = await eventually(async () =>
      seededB.current.scoped.events.lineNumber === 'page-line' ? seededB.current : undefined,
    );
    expect(runtimeB.scoped.lookup.defaultCountry).toBe('AT');
    expect(b.app.get(PortalRegistry).record('sandbox')?.settings.lineNumber).toBe('page-line');
    const after = newId('page');
    expect((await postCall(b, PBX_TOKEN, after)).status).toBe(202);
    expect((await registered(after)).LINE_NUMBER).toBe('page-line');

    // The page of the other replica shows the stored value, the environment's beside the empty choice.
    const pageB = await b.http
      .post('/app/view')
      .type('form')
      .send({ session: await signIn(b) });
    expect(pageB.text).toContain('value="page-line"');
    expect(pageB.text).toContain('placeholder="env-line"');

    // Cleared: the environment's value again, on both replicas.
    const cleared = await a.http.post('/app/settings').type('form').send({
      session,
      defaultUserId: '',
      defaultCountry: '',
      missedCallTask: '',
      lineNumber: '',
      DIAL_MODE: '',
    });
    expect(cleared.status).toBe(200);
    await eventually(async () =>
      seededB.current.scoped.events.lineNumber === 'env-line' ? true : undefined,
    );
    expect(seededB.current.scoped.lookup.defaultCountry).toBe('DE');
    const again = newId('env-again');
    expect((await postCall(b, PBX_TOKEN, again)).status).toBe(202);
    expect((await registered(again)).LINE_NUMBER).toBe('env-line');
  });

  it('loses and doubles nothing in flight across the rebuild: every call reaches the portal once', async () => {
    const [a, b] = replicas;
    const session = await signIn(a);
    const ids = Array.from({ length: 40 }, () => newId('rebuild'));
    const posting = Promise.all(
      ids.map(async (callId, index) => {
        expect((await postCall(index % 2 ? a : b, PBX_TOKEN, callId)).status).toBe(202);
      }),
    );
    // Saved while the calls are taken in and delivered: both replicas rebuild the runtime meanwhile.
    const saved = await a.http.post('/app/settings').type('form').send({
      session,
      defaultUserId: '',
      defaultCountry: 'CH',
      missedCallTask: '',
      lineNumber: '',
      DIAL_MODE: '',
    });
    expect(saved.status).toBe(200);
    await posting;
    const delivered = await eventually(async () => {
      const calls = (await Promise.all(
        ids.map((callId) => callsByExternalId(sandbox, callId)),
      )) as unknown as {
        registerRequests: number;
        finished: unknown;
      }[][];
      return calls.every((found) => found.length === 1 && found[0].finished) ? calls : undefined;
    }, 40_000);
    for (const [call] of delivered) expect(call.registerRequests).toBe(1);
    const seededB = b.app.get(SeededRuntime);
    await eventually(async () => (seededB.current.scoped.lookup.defaultCountry === 'CH' ? true : undefined));
    // Back to the environment's for the specs after this one.
    await a.http.post('/app/settings').type('form').send({
      session,
      defaultUserId: '',
      defaultCountry: '',
      missedCallTask: '',
      lineNumber: '',
      DIAL_MODE: '',
    });
  }, 60_000);

  it("PATCH /v1/admin/portals/:portalId changes the seeded portal as the page does; its budget stays the environment's", async () => {
    const [a, b] = replicas;
    const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
    const patched = await a.http
      .patch('/v1/admin/portals/sandbox')
      .set(admin)
      .send({ lineNumber: 'api-line' });
    expect(patched.status).toBe(200);
    expect(patched.body.settings.lineNumber).toBe('api-line');
    const seededB = b.app.get(SeededRuntime);
    await eventually(async () =>
      seededB.current.scoped.events.lineNumber === 'api-line' ? true : undefined,
    );
    const plan = await a.http.patch('/v1/admin/portals/sandbox').set(admin).send({ rateLimitRps: 5 });
    expect(plan.status).toBe(400);
    expect(JSON.stringify(plan.body)).toContain('B24_RATE_LIMIT_RPS');
    expect((await a.http.get('/v1/admin/portals/other').set(admin)).status).toBe(404);
    expect((await a.http.patch('/v1/admin/portals/sandbox').send({ lineNumber: null })).status).toBe(401);
    expect(
      (await a.http.patch('/v1/admin/portals/sandbox').set(admin).send({ lineNumber: null })).status,
    ).toBe(200);
    await eventually(async () =>
      seededB.current.scoped.events.lineNumber === 'env-line' ? true : undefined,
    );
  });

  it('refuses a bad setting naming the field, and stores nothing', async () => {
    const [a] = replicas;
    const session = await signIn(a);
    const refused = await a.http.post('/app/settings').type('form').send({
      session,
      defaultUserId: 'abc',
      defaultCountry: '',
      missedCallTask: '',
      lineNumber: '',
      DIAL_MODE: '',
    });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('defaultUserId');
    expect(a.app.get(PortalRegistry).record('sandbox')?.settings.defaultUserId).toBeUndefined();
  });

  it('creates a PBX token shown once, accepted on every replica beside PBX_TOKENS, refused once revoked', async () => {
    const [a, b] = replicas;
    const session = await signIn(a);
    const created = await a.http.post('/app/tokens').type('form').send({ session, label: 'office PBX' });
    expect(created.status).toBe(200);
    const token = /<output id="new-token">([^<]+)<\/output>/.exec(created.text)?.[1] ?? '';
    expect(token).toMatch(/^pbx_/);
    // PBX_TOKENS are listed as the environment's: named, never shown, not revocable here.
    expect(created.text).toContain('PBX_TOKENS #1');
    expect(created.text).not.toContain(PBX_TOKEN);
    const id = /action="\/app\/tokens\/([^/"]+)\/revoke"/.exec(created.text)?.[1] ?? '';
    expect(id).not.toMatch(/^env-/);
    expect(created.text.match(/\/revoke"/g)).toHaveLength(1);

    const callId = newId('stored-token');
    expect((await postCall(b, token, callId)).status).toBe(202);
    await registered(callId);
    expect((await postCall(b, PBX_TOKEN, newId('env-token'))).status).toBe(202);

    const revoked = await a.http.post(`/app/tokens/${id}/revoke`).type('form').send({ session });
    expect(revoked.status).toBe(200);
    expect(revoked.text).toContain('Token revoked.');
    expect((await postCall(b, token, newId('revoked'))).status).toBe(401);
    expect((await postCall(a, token, newId('revoked'))).status).toBe(401);
    // An environment token cannot be revoked from the page.
    await a.http.post('/app/tokens/env-1/revoke').type('form').send({ session });
    expect((await postCall(a, PBX_TOKEN, newId('env-still'))).status).toBe(202);
  });

  it('tests the PBX-events connection: a login at the PBX, nothing stored', async () => {
    const [a] = replicas;
    const session = await signIn(a);
    const tested = await a.http
      .post('/app/test-follow')
      .type('form')
      .send({ session, PBX_EVENTS: 'ami', AMI_URL: pbx.url() });
    expect(tested.status).toBe(200);
    expect(tested.text).toContain('The PBX answered and accepted the login.');
    expect(pbx.logins).toBe(1);
    expect(tested.text).not.toContain(AMI_SECRET);
    expect(a.app.get(PortalRegistry).record('sandbox')?.settings.follow).toBeUndefined();
  });
});
