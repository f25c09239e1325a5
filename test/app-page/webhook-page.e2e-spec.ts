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
 * settings are the portal's stored ones over the environment's, changed on the page.
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

  it('refuses a wrong admin token and opens the page for the right one, its settings editable', async () => {
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
    // The settings are the portal's stored ones over the environment's: empty, with the environment's beside.
    expect(await page.inputValue('#defaultCountry')).toBe('');
    expect(await page.getAttribute('#defaultCountry', 'placeholder')).toBe('DE');
    expect(await page.isDisabled('#defaultCountry')).toBe(false);
    // PBX_TOKENS are listed as the environment's, never shown.
    expect(await page.textContent('#tokens')).toContain('PBX_TOKENS #1');
    expect(await page.textContent('#connection')).toContain('working');
    await eventually(async () => {
      await Promise.all([page.waitForNavigation(), page.press('#refresh', 'Enter')]);
      const text = (await page.textContent('#calls')) ?? '';
      return text.includes('wh-') ? text : undefined;
    });
    // A save in the browser is stored and shown again.
    await page.fill('#defaultCountry', 'AT');
    await Promise.all([
      page.waitForNavigation(),
      page.click('#settings button[type="submit"]:not([formaction])'),
    ]);
    expect(await page.textContent('body')).toContain('Saved.');
    expect(await page.inputValue('#defaultCountry')).toBe('AT');
    // The page never shows the admin token.
    expect(await page.content()).not.toContain(ADMIN_TOKEN);
  });
});
