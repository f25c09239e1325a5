import { SandboxTenant } from '../../sandbox';
import { defaultSeed } from '../../sandbox/seed';
import { AmiServer } from '../support/ami-server';
import { ended, eventually, started } from '../support/bridge-harness';
import { PortalPages } from './page-harness';
import { readAgain, sessionOf, shot, submitIn } from './portal-frame';

/**
 * The application's page (the API contract's §10) in a real browser: the portal's page on its own site posts
 * the application form into a frame whose target is the bridge on another site (localhost vs 127.0.0.1), and
 * the test clicks through inside the frame, as a portal's administrator (or another user) would.
 */
describe('the application page in the portal (multi mode, headless Chromium)', () => {
  // One more employee, with no internal number: the page names who has none.
  const employees = [
    ...defaultSeed().employees,
    { ID: 6, NAME: 'Emil', LAST_NAME: 'Frank', EMAIL: 'emil@sandbox.test', ACTIVE: true, UF_PHONE_INNER: '' },
  ];
  const pages = PortalPages.use({
    portals: [{ name: 'alpha', seed: { employees } }],
    temp: 'bridge-app-page-',
    env: { DELIVERY_MAX_ATTEMPTS: '2' },
  });
  let alpha: SandboxTenant;

  const adminAuth = () => alpha.issueTokens(undefined, 1)?.access_token ?? '';
  /** User 2 of the sandbox's seed (Anna, sales) is no administrator. */
  const userAuth = () => alpha.issueTokens(undefined, 2)?.access_token ?? '';
  const open = (authId: string, lang = 'en') =>
    pages.host.open(pages.page, {
      bridgeUrl: pages.bridge.url,
      authId,
      memberId: alpha.memberId,
      domain: alpha.domain,
      lang,
    });
  const portalSettings = async () => (await pages.portal(alpha)).settings;

  beforeAll(() => {
    alpha = pages.tenant('alpha');
  });

  afterEach(() => {
    alpha?.clearFaults();
  });

  it('refuses a forged AUTH_ID: the portal confirms nobody, no session is opened', async () => {
    const { frame, status } = await open('forged-auth-id-0123456789abcdef');
    expect(status).toBe(401);
    expect(await frame.textContent('body')).toContain('The portal did not confirm who you are');
    expect(await frame.$('input[name="session"]')).toBeNull();
    // Nor is a made-up session taken.
    const made = await pages.bridge.http
      .post('/app/view')
      .type('form')
      .send({ session: 'eyJwb3J0YWxJZCI6ImFscGhhIn0' });
    expect(made.status).toBe(401);
  });

  it('lets an administrator in, framed only by the portal, in a session that works without cookies', async () => {
    const { frame, status } = await open(adminAuth());
    expect(status).toBe(200);
    expect(await frame.textContent('header')).toContain('administrator');
    expect(await frame.textContent('#connection')).toContain('Portal credentials');
    // Chromium keeps no cookie for the bridge, and no address carries the session: it rides in the forms.
    expect(await pages.context.cookies(pages.bridge.url)).toEqual([]);
    const session = await sessionOf(frame);
    expect(frame.url()).not.toContain(session.slice(0, 16));
    await readAgain(frame);
    expect(frame.url()).toBe(`${pages.bridge.url}/app/view`);
    const direct = await pages.bridge.http.post('/app/view').type('form').send({ session });
    expect(direct.headers['content-security-policy']).toContain(
      `frame-ancestors ${new URL(alpha.restUrl).origin} localhost:${pages.host.port}`,
    );
    expect(direct.headers['content-security-policy']).toContain("default-src 'none'");
    expect(direct.headers['set-cookie']).toBeUndefined();
    // The employees, with who has no internal number.
    expect(await frame.textContent('#employees')).toContain('Anna Berger');
    expect(await frame.textContent('#employees tr.missing')).toContain('Emil Frank');
  });

  it('shows a new PBX token once; a PBX post with it is accepted', async () => {
    const { frame } = await open(adminAuth());
    await frame.fill('#token-label', 'office PBX');
    await submitIn(frame, '#tokens button[type=submit]:text("Create a token")');
    const token = (await frame.textContent('#new-token'))?.trim() ?? '';
    expect(token).toMatch(/^pbx_/);
    const accepted = await pages.bridge.http
      .post('/v1/calls/events')
      .set('Authorization', `Bearer ${token}`)
      .send(started(`app-token-${Date.now()}`));
    expect(accepted.status).toBe(202);
    // Shown once: the page read again lists the token by its label only.
    await readAgain(frame);
    expect(await frame.$('#new-token')).toBeNull();
    expect(await frame.textContent('#tokens')).toContain('office PBX');
    expect(await frame.content()).not.toContain(token);
  });

  it('re-queues a failed call with the portal words shown, and the call is then delivered', async () => {
    const { frame } = await open(adminAuth());
    await frame.fill('#token-label', 'requeue test');
    await submitIn(frame, '#tokens button[type=submit]:text("Create a token")');
    const token = (await frame.textContent('#new-token'))?.trim() ?? '';
    const callId = `app-failed-${Date.now()}`;
    alpha.injectFault({ kind: 'refuse', text: callId, status: 403 });
    const post = await pages.bridge.http
      .post('/v1/calls/events')
      .set('Authorization', `Bearer ${token}`)
      .send([started(callId, { extension: '177' }), ended(callId)]);
    expect(post.status).toBe(202);
    await eventually(async () => {
      const status = await pages.bridge.http
        .get(`/v1/calls/${callId}`)
        .set('Authorization', `Bearer ${token}`);
      return status.body.state === 'failed' ? status : undefined;
    }, 40_000);
    alpha.clearFaults();
    await readAgain(frame);
    const row = frame.locator('#calls tr', { hasText: callId });
    expect(await row.textContent()).toContain('HTTP 403');
    // 177 is an internal number nobody has.
    expect(await frame.textContent('#unmatched')).toContain('177');
    await submitIn(frame, `#calls tr:has-text("${callId}") button`);
    expect(await frame.textContent('[role=status]')).toContain('Sent again');
    const delivered = await eventually(async () => {
      const call = alpha.calls().find((candidate) => candidate.EXTERNAL_CALL_ID === callId);
      return call?.finished ? call : undefined;
    }, 40_000);
    expect(delivered.finished).toBeTruthy();
  }, 90_000);

  it('shows a bad setting beside its field, stores nothing; a good one takes effect at once', async () => {
    const { frame } = await open(adminAuth());
    await frame.fill('#defaultCountry', 'Germany');
    await submitIn(frame, '#settings button:text("Save")');
    const error = frame.locator('#defaultCountry + .field-error');
    expect(await error.textContent()).toContain('ISO 3166 alpha-2');
    expect(await frame.getAttribute('#defaultCountry', 'aria-invalid')).toBe('true');
    expect(await frame.inputValue('#defaultCountry')).toBe('Germany');
    expect((await portalSettings()).defaultCountry).toBeUndefined();
    await frame.evaluate(() => document.getElementById('settings')?.scrollIntoView());
    await pages.page.screenshot({ path: shot('settings-error-1280.png') });

    await frame.fill('#defaultCountry', 'AT');
    await frame.selectOption('#missedCallTask', 'on');
    await submitIn(frame, '#settings button:text("Save")');
    expect(await frame.textContent('[role=status]')).toContain('Saved');
    expect(await portalSettings()).toMatchObject({ defaultCountry: 'AT', missedCallTask: true });
  });

  it('tests the dial settings against the PBX: ok, or the reason without the password', async () => {
    const ami = await AmiServer.start('crm', 'pbx-secret-4711');
    try {
      const { frame } = await open(adminAuth());
      await frame.selectOption('#DIAL_MODE', 'ami');
      await frame.fill('#AMI_URL', ami.url());
      await submitIn(frame, '#test-dial');
      expect(await frame.textContent('#test-result')).toContain('accepted the login');
      expect(ami.actions.map((action) => action.Action)).toEqual(['Login', 'Logoff']);
      await frame.fill('#AMI_URL', ami.url('wrong-secret'));
      await submitIn(frame, '#test-dial');
      const refused = (await frame.textContent('#test-result')) ?? '';
      expect(refused).toContain('login refused');
      expect(await frame.content()).not.toContain('wrong-secret');
      // Nothing was stored by a test.
      expect((await portalSettings()).dial).toBeUndefined();
    } finally {
      await ami.close();
    }
  });

  it('lets a user who is no administrator look, and the server refuses a forged change', async () => {
    const { frame, status } = await open(userAuth());
    expect(status).toBe(200);
    expect(await frame.textContent('#read-only')).toContain('only a portal administrator');
    expect(await frame.$('#settings button')).toBeNull();
    expect(await frame.$('#token-label')).toBeNull();
    const before = await portalSettings();
    // The page offers no form; a post made by hand with the user's own session is refused all the same.
    const session = await sessionOf(frame);
    const forged = await pages.bridge.http
      .post('/app/settings')
      .type('form')
      .send({ session, defaultCountry: 'FR', missedCallTask: 'off' });
    expect(forged.status).toBe(403);
    const token = await pages.bridge.http.post('/app/tokens').type('form').send({ session, label: 'mine' });
    expect(token.status).toBe(403);
    expect(await portalSettings()).toEqual(before);
    // A session is sealed: a changed byte is no session at all.
    const bytes = Buffer.from(session, 'base64url');
    bytes[bytes.length - 20] ^= 1;
    expect(
      (
        await pages.bridge.http
          .post('/app/settings')
          .type('form')
          .send({ session: bytes.toString('base64url'), defaultCountry: 'FR' })
      ).status,
    ).toBe(401);
  });

  it('speaks German and Russian (LANG), and fits the portal side panel (400 px)', async () => {
    await pages.page.setViewportSize({ width: 400, height: 900 });
    const german = await open(adminAuth(), 'de');
    expect(await german.frame.textContent('h1')).toBe('Telefonie-Brücke');
    expect(await german.frame.textContent('#settings')).toContain('Einstellungen');
    const russian = await open(adminAuth(), 'ru');
    expect(await russian.frame.textContent('h1')).toBe('Телефонный мост');
    expect(await russian.frame.textContent('#calls')).toContain('Звонки за сегодня');
    const english = await open(adminAuth(), 'xx');
    expect(await english.frame.textContent('h1')).toBe('Telephony bridge');
    // Nothing wider than the panel: the document does not scroll sideways.
    const overflow = await english.frame.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect(overflow).toBeLessThanOrEqual(0);
    // Screenshots of the whole page: a frame as tall as the page (the frame is the viewport less 3rem).
    const tall = (frame: typeof english.frame) =>
      frame.evaluate(() => document.documentElement.scrollHeight + 48);
    await pages.page.setViewportSize({ width: 400, height: await tall(english.frame) });
    await pages.page.locator('#app-frame').screenshot({ path: shot('admin-400.png') });
    await pages.page.setViewportSize({ width: 1280, height: 1500 });
    const wide = await open(adminAuth());
    await pages.page.setViewportSize({ width: 1280, height: await tall(wide.frame) });
    await pages.page.locator('#app-frame').screenshot({ path: shot('admin-1280.png') });
    // Keyboard: Tab reaches the form fields, and focus is visible.
    await wide.frame.focus('#defaultCountry');
    const outline = await wide.frame.evaluate(
      () => getComputedStyle(document.activeElement as Element).outlineStyle,
    );
    expect(outline).not.toBe('none');
  });
});
