import { Browser, BrowserContext, chromium, Frame, Page, Response } from 'playwright-core';
import { SandboxPortal, SandboxTenant } from '../../sandbox';
import { ended, eventually, started } from '../support/bridge-harness';
import {
  callState,
  installApp,
  OAuthBridge,
  postCalls,
  startOAuthBridge,
  tempDir,
} from '../auth/oauth-harness';
import { CHROMIUM, submitIn } from './portal-frame';

/**
 * The application's page with one portal and OAuth (B24_PORTAL_URL, B24_APP_MODE unset), opened the way a real
 * portal opens it: the portal's own page (served here at the sandbox portal's origin, 127.0.0.1:<port>) posts
 * the application form into a frame whose target is the bridge on another site (localhost:<port>). The
 * bridge asks B24_PORTAL_URL who holds the AUTH_ID; the settings are the environment's (read only here).
 */
describe('the application page, one portal with OAuth (headless Chromium)', () => {
  let sandbox: SandboxPortal;
  let other: SandboxTenant;
  let bridge: OAuthBridge;
  let temp: { dir: string; remove(): void };
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let memberId: string;

  /** The bridge as the browser addresses it: another site than the portal's 127.0.0.1. */
  const bridgeSite = () => bridge.url.replace('127.0.0.1', 'localhost');
  const adminAuth = () => sandbox.issueTokens(undefined, 1)?.access_token ?? '';
  /** User 2 of the sandbox's seed (Anna, sales) is no administrator. */
  const userAuth = () => sandbox.issueTokens(undefined, 2)?.access_token ?? '';

  /**
   * The portal's page at the portal's own origin, with the application's frame: its form posts what a portal
   * posts (AUTH_ID, REFRESH_ID, member_id… in the body; DOMAIN, LANG… in the address). Resolves with the
   * frame once the bridge's answer has loaded, and that answer's status.
   */
  const open = async (post: { authId: string; memberId: string; lang?: string }) => {
    const portalPage = `${sandbox.url}/marketplace/app/bridge/`;
    const query = new URLSearchParams({
      DOMAIN: new URL(sandbox.url).host,
      PROTOCOL: '0',
      LANG: post.lang ?? 'en',
      APP_SID: 'sid-0123456789',
    });
    const fields: Record<string, string> = {
      AUTH_ID: post.authId,
      AUTH_EXPIRES: '3600',
      REFRESH_ID: 'refresh-not-used-by-the-page',
      member_id: post.memberId,
      status: 'L',
      PLACEMENT: 'DEFAULT',
      PLACEMENT_OPTIONS: '{}',
    };
    const inputs = Object.entries(fields)
      .map(([name, value]) => `<input type="hidden" name="${name}" value="${value.replace(/"/g, '&quot;')}">`)
      .join('');
    await page.route(portalPage, (route) =>
      route.fulfill({
        contentType: 'text/html; charset=utf-8',
        body: `<!doctype html><html><head><title>Portal</title></head><body>
<form id="open" method="post" target="app" action="${bridgeSite()}/app?${query}">${inputs}<button id="open-app" type="submit">Open</button></form>
<iframe name="app" id="app-frame" title="application" style="width:100%;height:800px;border:0"></iframe></body></html>`,
      }),
    );
    await page.goto(portalPage);
    const statuses: number[] = [];
    const listener = (response: Response) => {
      if (response.frame().name() === 'app' && response.request().isNavigationRequest()) {
        statuses.push(response.status());
      }
    };
    page.on('response', listener);
    await Promise.all([
      page.waitForEvent('framenavigated', {
        // The bridge's page, or Chromium's error page where its answer forbids framing (frame-ancestors).
        predicate: (frame) => frame.name() === 'app' && frame.url() !== 'about:blank',
      }),
      page.click('#open-app'),
    ]);
    const frame = page.frame({ name: 'app' });
    if (!frame) throw new Error('no application frame');
    await frame.waitForLoadState('load');
    page.off('response', listener);
    return { frame, status: statuses[statuses.length - 1] ?? 0 };
  };
  /** The page's "read again" button: a form posting the session (no address carries it). */
  const readAgain = (frame: Frame) => submitIn(frame, '#refresh');
  const sessionOf = async (frame: Frame) =>
    (await frame.getAttribute('input[name="session"]', 'value')) ?? '';
  /** A hand-made post with the session taken from the page's forms, as the browser would send it. */
  const postWith = async (frame: Frame, path: string, form: Record<string, string>) =>
    bridge.http
      .post(`/app${path}`)
      .type('form')
      .send({ session: await sessionOf(frame), ...form });

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    // Another portal in the same sandbox process, on which the same application is installed.
    other = sandbox.addPortal({ name: 'other' });
    temp = tempDir();
    bridge = await startOAuthBridge(sandbox, temp.dir, {
      DELIVERY_MAX_ATTEMPTS: '2',
      DELIVERY_MAX_BACKOFF_SEC: '1',
      LOG_LEVEL: process.env.DEBUG_LOG ?? 'error',
    });
    expect((await installApp(sandbox, bridge)).status).toBe(200);
    memberId = (await bridge.storedTokens())?.memberId ?? '';
    expect(memberId).not.toBe('');
    // The portal's page is answered by the test (page.route), so Chromium knows no address for it and counts
    // it as public: its Local Network Access check would then block the frame's post to the bridge on this
    // machine, which a real portal (public) and a real bridge (public) never meet.
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-features=LocalNetworkAccessChecks'],
    });
  }, 60_000);

  beforeEach(async () => {
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
  });

  afterEach(async () => {
    await context?.close();
    sandbox?.clearFaults();
  });

  afterAll(async () => {
    await browser?.close();
    await bridge?.close();
    await sandbox?.close();
    temp?.remove();
  });

  it('lets an administrator in, framed by the portal only, in a session without cookies', async () => {
    const { frame, status } = await open({ authId: adminAuth(), memberId });
    expect(status).toBe(200);
    expect(new URL(frame.url()).host).toBe(new URL(bridgeSite()).host);
    const session = await sessionOf(frame);
    expect(session).not.toBe('');
    expect(frame.url()).not.toContain(session.slice(0, 16));
    expect(await frame.textContent('header')).toContain('administrator');
    // The portal user by the directory's name, never "user 1".
    expect(await frame.textContent('#signed-in')).toBe('Signed in as Admin Sandbox');
    expect(await frame.textContent('#connection')).toContain('Portal credentials');
    expect(await frame.textContent('#employees')).toContain('Anna Berger');
    expect(await context.cookies(bridgeSite())).toEqual([]);
    const direct = await bridge.http.post('/app/view').type('form').send({ session });
    // Framed by B24_PORTAL_URL's origin, which is where the page above is: Chromium showed it.
    expect(direct.headers['content-security-policy']).toContain(
      `frame-ancestors ${new URL(sandbox.url).origin}`,
    );
    // One portal with OAuth: its settings are stored over the environment's and saved here, as with many.
    expect(await frame.$('#token-label')).not.toBeNull();
    expect(await frame.textContent('#settings')).toContain('environment');
    const settings = await postWith(frame, '/settings', {
      defaultCountry: 'AT',
      defaultUserId: '',
      missedCallTask: '',
      DIAL_MODE: '',
    });
    expect(settings.status).toBe(200);
    await readAgain(frame);
    expect(await frame.inputValue('#defaultCountry')).toBe('AT');
    // Back to the environment's for the specs after this one.
    expect(
      (await postWith(frame, '/settings', { defaultCountry: '', defaultUserId: '', DIAL_MODE: '' })).status,
    ).toBe(200);
  });

  it("an administrator's re-queue of a failed call takes effect: the portal then holds the call", async () => {
    const { frame } = await open({ authId: adminAuth(), memberId });
    const callId = `single-app-${Date.now()}`;
    sandbox.injectFault({ kind: 'refuse', text: callId, status: 403 });
    await postCalls(bridge, [started(callId, { extension: '101' }), ended(callId)]);
    await eventually(async () => {
      const call = await callState(bridge, callId);
      return call.state === 'failed' ? call : undefined;
    }, 40_000);
    sandbox.clearFaults();
    await readAgain(frame);
    expect(await frame.locator('#calls tr', { hasText: callId }).textContent()).toContain('HTTP 403');
    expect(sandbox.calls().find((call) => call.EXTERNAL_CALL_ID === callId)?.finished).toBeFalsy();
    await submitIn(frame, `#calls tr:has-text("${callId}") button`);
    expect(await frame.textContent('[role=status]')).toContain('Sent again');
    const delivered = await eventually(async () => {
      const call = sandbox.calls().find((candidate) => candidate.EXTERNAL_CALL_ID === callId);
      return call?.finished ? call : undefined;
    }, 40_000);
    // Anna (user 2) has extension 101: the call went to her.
    expect(Number(delivered.USER_ID)).toBe(2);
  }, 90_000);

  it('refuses a forged AUTH_ID: the portal confirms nobody, no session is opened', async () => {
    const { frame, status } = await open({ authId: 'forged-auth-id-0123456789abcdef', memberId });
    expect(status).toBe(401);
    expect(await frame.textContent('body')).toContain('The portal did not confirm who you are');
    expect(await frame.$('input[name="session"]')).toBeNull();
  });

  it('lets a user who is no administrator look; the server refuses a change made by hand', async () => {
    const { frame, status } = await open({ authId: userAuth(), memberId });
    expect(status).toBe(200);
    expect(await frame.textContent('#read-only')).toContain('only a portal administrator');
    expect(await frame.textContent('header')).not.toContain('may change settings');
    expect(await frame.$('#calls button')).toBeNull();
    expect((await postWith(frame, '/calls/requeue-failed', {})).status).toBe(403);
    expect((await postWith(frame, '/settings', { defaultCountry: 'FR' })).status).toBe(403);
  });

  it("refuses another portal's member_id, with that portal's own user or with this portal's", async () => {
    const otherAdmin = other.issueTokens(undefined, 1)?.access_token ?? '';
    expect(otherAdmin).not.toBe('');
    // The other portal's administrator, as that portal posts: not this application's portal. The refusal
    // names no portal, so it may be framed by none (frame-ancestors 'none'): Chromium shows its own error.
    const theirs = await open({ authId: otherAdmin, memberId: other.memberId });
    expect(theirs.status).toBe(404);
    expect(await theirs.frame.$('input[name="session"]')).toBeNull();
    // Their token under this portal's member_id: B24_PORTAL_URL does not know it.
    const borrowed = await open({ authId: otherAdmin, memberId });
    expect(borrowed.status).toBe(401);
    expect(await borrowed.frame.textContent('body')).toContain('The portal did not confirm who you are');
    // A valid token of this portal under another member_id: a post no portal makes; refused too.
    const mixed = await open({ authId: adminAuth(), memberId: other.memberId });
    expect(mixed.status).toBe(404);
    expect(await mixed.frame.$('input[name="session"]')).toBeNull();
    const direct = await bridge.http
      .post('/app')
      .type('form')
      .send({ AUTH_ID: adminAuth(), member_id: other.memberId, LANG: 'en' });
    expect(direct.status).toBe(404);
    expect(direct.headers.location).toBeUndefined();
    expect(direct.text).toContain('has not installed the application');
    // The same post with this portal's member_id opens a session: only the member_id made the difference.
    const same = await bridge.http
      .post('/app')
      .type('form')
      .send({ AUTH_ID: adminAuth(), member_id: memberId, LANG: 'en' });
    expect(same.status).toBe(200);
    expect(same.text).toMatch(/name="session" value="[^"]+"/);
  });
});
