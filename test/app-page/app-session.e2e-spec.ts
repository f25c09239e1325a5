import { randomBytes } from 'node:crypto';
import { SandboxPortal, SandboxTenant } from '../../sandbox';
import { FormAnswer as Answer, postFrom } from '../support/post-from';
import { ADMIN_TOKEN } from '../support/bridge-harness';
import { install, MultiBridge, startMultiBridge, tempDir, uninstall } from '../support/multi-harness';

const sessionIn = (page: string) => /name="session" value="([^"]+)"/.exec(page)?.[1] ?? '';

/**
 * Issue 36 findings 2–4 through HTTP into the bridge, the sandbox portal answering over HTTP: the page's
 * session never rides in an address (the old `/app/s/<session>` addresses are refused), it is bound to the
 * portal's install (an uninstall or a reinstall ends it) and re-confirmed with the portal (here on every
 * page, `APP_PAGE_RECHECK_SEC=0`: a demoted administrator can change nothing more); `POST /app` costs a
 * forger a handful of portal requests at most; "Test connection" is limited per portal.
 */
describe('the application page session: out of addresses, bound, re-confirmed, limited', () => {
  let sandbox: SandboxPortal;
  let bridge: MultiBridge;
  let temp: ReturnType<typeof tempDir>;
  let alpha: SandboxTenant;
  let beta: SandboxTenant;

  const authOf = (tenant: SandboxTenant, userId = 1) =>
    tenant.issueTokens(undefined, userId)?.access_token ?? '';
  const enter = (tenant: SandboxTenant, authId: string, source = '127.0.0.1') =>
    postFrom(source, `${bridge.url}/app?LANG=en`, {
      AUTH_ID: authId,
      REFRESH_ID: 'r',
      member_id: tenant.memberId,
      PLACEMENT: 'DEFAULT',
    });
  const post = (path: string, form: Record<string, unknown>) =>
    postFrom('127.0.0.1', `${bridge.url}${path}`, form);
  // Calls the portal ran. One its own limiter turned away (503 QUERY_LIMIT_EXCEEDED: the budget's mirror
  // starts full when a runtime is rebuilt, and learns from that answer) ran nothing there, and is repeated.
  const portalCalls = (tenant: SandboxTenant, method: string, since: number) =>
    tenant
      .requests(since)
      .filter((entry) => entry.method === method && entry.error !== 'QUERY_LIMIT_EXCEEDED').length;

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    alpha = sandbox.addPortal({ name: 'alpha' });
    beta = sandbox.addPortal({ name: 'beta' });
    temp = tempDir('bridge-app-session-');
    bridge = await startMultiBridge(sandbox, temp.dir, { APP_PAGE_RECHECK_SEC: '0' });
    expect(await install(alpha, bridge.url)).toBe(200);
    expect(await install(beta, bridge.url)).toBe(200);
  }, 60_000);

  afterAll(async () => {
    await bridge?.close();
    await sandbox?.close();
    temp?.remove();
  });

  it('carries the session in the forms only; an old address with a session in its path is refused', async () => {
    const entry = await enter(alpha, authOf(alpha));
    expect(entry.status).toBe(200);
    expect(entry.location).toBeUndefined();
    const session = sessionIn(entry.text);
    expect(session).not.toBe('');
    // Every form posts it in its body; no link or action names it.
    expect(entry.text).not.toMatch(/(href|action|formaction)="[^"]*\/app\/s\//);
    expect(entry.text.split(session).length - 1).toBe((entry.text.match(/<form /g) ?? []).length);
    // The page read again with the session posted.
    expect((await post('/app/view', { session })).status).toBe(200);
    // The old addresses authenticate nothing, whatever they carry.
    const old = await fetch(`${bridge.url}/app/s/${encodeURIComponent(session)}`);
    expect(old.status).toBe(410);
    expect(await old.text()).not.toContain('name="session"');
    const oldPost = await post(`/app/s/${encodeURIComponent(session)}/settings`, { defaultCountry: 'FR' });
    expect(oldPost.status).toBe(410);
    // A session for another portal's page: beta's session is no alpha session, and carries beta only.
    const theirs = sessionIn((await enter(beta, authOf(beta))).text);
    const view = await post('/app/view', { session: theirs });
    expect(view.status).toBe(200);
    expect(view.text).toContain(beta.domain);
    expect(view.text).not.toContain(alpha.domain);
  });

  it('asks the portal again: an administrator demoted there can change nothing more', async () => {
    const session = sessionIn((await enter(alpha, authOf(alpha))).text);
    const since = Date.now();
    expect((await post('/app/settings', { session, defaultCountry: 'AT', DIAL_MODE: '' })).status).toBe(200);
    // The portal was asked whether the user still administers it, within its request budget.
    expect(portalCalls(alpha, 'user.admin', since)).toBeGreaterThanOrEqual(1);
    const administrator = alpha.state.employees.get(1)!;
    administrator.ADMIN = false;
    try {
      const refused = await post('/app/settings', { session, defaultCountry: 'FR', DIAL_MODE: '' });
      expect(refused.status).toBe(403);
      // The page it now shows is a viewer's.
      const viewed = await post('/app/view', { session });
      expect(viewed.status).toBe(200);
      expect(viewed.text).toContain('id="read-only"');
    } finally {
      administrator.ADMIN = true;
    }
  });

  it('ends every session of a portal that uninstalls, and a reinstall does not revive them', async () => {
    const session = sessionIn((await enter(beta, authOf(beta))).text);
    expect((await post('/app/view', { session })).status).toBe(200);
    expect(await uninstall(beta, bridge.url)).toBe(200);
    const after = await post('/app/view', { session });
    expect(after.status).toBe(401);
    expect(after.text).not.toContain('name="session"');
    expect(await install(beta, bridge.url)).toBe(200);
    expect((await post('/app/view', { session })).status).toBe(401);
    expect((await post('/app/tokens', { session, label: 'x' })).status).toBe(401);
    // A new entry under the new install opens the page again.
    const fresh = await enter(beta, authOf(beta));
    expect(fresh.status).toBe(200);
    expect((await post('/app/view', { session: sessionIn(fresh.text) })).status).toBe(200);
  });

  it('limits "Test connection" per portal: past ten a minute the page says so, with Retry-After', async () => {
    // A stored PBX connection, for the guided setup's test of it (stored first: a change rebuilds the
    // portal's runtime, whose budget then starts afresh).
    const admin = (settings: Record<string, unknown>) =>
      bridge.http
        .patch(`/v1/admin/portals/${alpha.memberId}`)
        .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
        .send(settings);
    expect((await admin({ follow: { PBX_EVENTS: 'ami', AMI_URL: 'tcp://u:p@127.0.0.1:1' } })).status).toBe(
      200,
    );
    const session = sessionIn((await enter(alpha, authOf(alpha))).text);
    const dial = { session, DIAL_MODE: 'ami', AMI_URL: 'tcp://u:p@127.0.0.1:1', defaultCountry: 'DE' };
    // All at once: a failed test answers at its deadline (5 s, alike for every failure), so one sent after
    // them would find the bucket refilled (one every 6 s). The PBX-events form's test and the guided setup's
    // test of the stored connection are among them: one limit for all, so of the thirteen three are refused.
    const answers: Answer[] = await Promise.all([
      ...Array.from({ length: 11 }, () => post('/app/test-dial', dial)),
      post('/app/test-follow', { session, PBX_EVENTS: 'ami', AMI_URL: 'tcp://u:p@127.0.0.1:1' }),
      post('/app/setup/test', { session }),
    ]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([...Array(10).fill(200), 429, 429, 429]);
    for (const refused of answers.filter((answer) => answer.status === 429)) {
      expect(Number(refused.retryAfter)).toBeGreaterThan(0);
      expect(refused.text).toMatch(/Too many (connection )?tests for this portal/);
    }
    // Another portal's tests are its own.
    const theirs = sessionIn((await enter(beta, authOf(beta))).text);
    expect((await post('/app/test-dial', { ...dial, session: theirs })).status).toBe(200);
  });

  // Last: the forgers leave alpha's entries limited for a while.
  it('30 forged entries for one member_id cost the portal a handful of requests; a real one still opens', async () => {
    const since = Date.now();
    const answers: Answer[] = [];
    for (let i = 0; i < 30; i += 1) {
      answers.push(await enter(alpha, randomBytes(20).toString('hex'), '127.0.0.9'));
    }
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status !== 401 && status !== 429)).toEqual([]);
    const limited = answers.filter((answer) => answer.status === 429);
    expect(limited.length).toBeGreaterThanOrEqual(20);
    expect(limited.every((answer) => Number(answer.retryAfter) > 0)).toBe(true);
    expect(limited[0].text).toContain('from this address');
    expect(portalCalls(alpha, 'user.current', since)).toBeLessThanOrEqual(5);
    // A real user of the portal, from their own address, opens the page meanwhile.
    expect((await enter(alpha, authOf(alpha), '127.0.0.10')).status).toBe(200);
    // The same from many addresses: the portal's own limit.
    for (let i = 0; i < 20; i += 1) {
      answers.push(await enter(alpha, randomBytes(20).toString('hex'), `127.0.1.${i}`));
    }
    expect(
      answers.slice(30).some((answer) => answer.status === 429 && answer.text.includes('for this portal')),
    ).toBe(true);
    expect(portalCalls(alpha, 'user.current', since)).toBeLessThanOrEqual(11);
    // beta's users are not limited by alpha's forgers, and confirmed entries give their credit back.
    for (let i = 0; i < 8; i += 1) expect((await enter(beta, authOf(beta), '127.0.0.11')).status).toBe(200);
  });
});
