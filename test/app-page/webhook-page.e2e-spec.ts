import { Browser, Page } from 'playwright-core';
import {
  ADMIN_TOKEN,
  eventually,
  Harness,
  PBX_TOKEN,
  started,
  startHarness,
} from '../support/bridge-harness';
import { launchChromium } from './portal-frame';

/**
 * Webhook mode (one portal, B24_WEBHOOK_URL): the portal posts no application form, so the same page sits
 * behind ADMIN_TOKEN, typed once into its sign-in form; the session then rides in the page's addresses. The
 * settings are the environment's: shown, not changed.
 */
describe('the application page in webhook mode (behind ADMIN_TOKEN)', () => {
  let h: Harness;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    h = await startHarness({ MISSED_CALL_TASK: '1', DEFAULT_COUNTRY: 'DE' });
    browser = await launchChromium();
  }, 60_000);

  beforeEach(async () => {
    page = await browser.newPage();
  });

  afterEach(async () => {
    await page?.close();
  });

  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  const signIn = async (token: string) => {
    await page.goto(`${h.url}/app?LANG=en`);
    await page.fill('#token', token);
    const [response] = await Promise.all([page.waitForNavigation(), page.press('#token', 'Enter')]);
    return response?.status();
  };

  it('refuses a wrong admin token and opens the page for the right one, settings read only', async () => {
    expect(await signIn('not-the-admin-token')).toBe(401);
    expect(await page.textContent('body')).toContain('did not confirm');
    expect(await page.$('input[name="session"]')).toBeNull();

    await h.http
      .post('/v1/calls/events')
      .set('Authorization', `Bearer ${PBX_TOKEN}`)
      .send(started(`wh-${Date.now()}`));
    expect(await signIn(ADMIN_TOKEN)).toBe(200);
    // The session rides in the forms, never in the address.
    const session = (await page.getAttribute('input[name="session"]', 'value')) ?? '';
    expect(session).not.toBe('');
    expect(page.url()).not.toContain(session.slice(0, 16));
    expect(await page.textContent('#settings')).toContain('come from the environment');
    expect(await page.inputValue('#defaultCountry')).toBe('DE');
    expect(await page.isDisabled('#defaultCountry')).toBe(true);
    expect(await page.$('#settings button')).toBeNull();
    // No per-portal PBX tokens with one portal (PBX_TOKENS).
    expect(await page.$('#tokens')).toBeNull();
    expect(await page.textContent('#connection')).toContain('working');
    await eventually(async () => {
      await Promise.all([page.waitForNavigation(), page.press('#refresh', 'Enter')]);
      const text = (await page.textContent('#calls')) ?? '';
      return text.includes('wh-') ? text : undefined;
    });
    // The server refuses a change all the same.
    const forged = await h.http.post('/app/settings').type('form').send({ session, defaultCountry: 'FR' });
    expect(forged.status).toBe(403);
    // The page never shows the admin token.
    expect(await page.content()).not.toContain(ADMIN_TOKEN);
  });
});
