import { Browser, Page } from 'playwright-core';
import {
  ADMIN_TOKEN,
  ended,
  eventually,
  Harness,
  PBX_TOKEN,
  started,
  startHarness,
} from '../support/bridge-harness';
import { PortalRegistry } from '../../src/tenancy/portal-registry';
import { launchChromium, shot } from './portal-frame';

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
    // The sign-in prompt is a prompt, not an error.
    await page.goto(`${h.url}/app?LANG=en`);
    expect(await page.textContent('.prompt')).toContain('sign in with');
    expect(await page.$('.problem')).toBeNull();
    expect(await signIn('not-the-admin-token')).toBe(401);
    expect(await page.textContent('[role=alert]')).toBe(
      "That is not this bridge's admin token (ADMIN_TOKEN).",
    );
    expect(await page.textContent('body')).not.toContain('did not confirm');
    expect(await page.$('input[name="session"]')).toBeNull();

    await h.http
      .post('/v1/calls/events')
      .set('Authorization', `Bearer ${PBX_TOKEN}`)
      .send(started(`wh-${Date.now()}`));
    expect(await signIn(ADMIN_TOKEN)).toBe(200);
    expect(await page.textContent('#signed-in')).toBe('Signed in with the admin token');
    // The events line is a sentence, not a mode and a dash.
    const events = (await page.locator('#connection tr', { hasText: 'Portal events' }).textContent()) ?? '';
    expect(events).not.toContain('line -');
    expect(events).toContain('calls are filed under line pbx-bridge.');
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

  it("lists today's calls with time, direction, number, employee, duration and the state in words", async () => {
    const done = `wh-done-${Date.now()}`;
    const open = `wh-open-${Date.now()}`;
    const post = (body: unknown) =>
      h.http
        .post('/v1/calls/events')
        .set('Authorization', `Bearer ${PBX_TOKEN}`)
        .send(body as object);
    const at = new Date().toISOString();
    expect((await post([started(done, { at }), ended(done, { at })])).status).toBe(202);
    expect(
      (
        await post(
          started(open, { at, direction: 'outbound', phoneNumber: '+49 30 555 0100', extension: '102' }),
        )
      ).status,
    ).toBe(202);
    expect(await signIn(ADMIN_TOKEN)).toBe(200);
    const row = (callId: string) => page.locator('#calls tr', { hasText: callId });
    const finished = await eventually(async () => {
      await Promise.all([page.waitForNavigation(), page.press('#refresh', 'Enter')]);
      const text =
        (await row(done)
          .textContent({ timeout: 1000 })
          .catch(() => '')) ?? '';
      return text.includes('delivered') ? text : undefined;
    });
    expect(finished).toContain('+4915112345678');
    expect(finished).toContain('incoming');
    expect(finished).toContain('←');
    expect(finished).toContain('2:01');
    // Extension 101 is Anna Berger in the sandbox's directory.
    expect(finished).toContain('Anna Berger');
    const ringing = (await row(open).textContent()) ?? '';
    expect(ringing).toContain('outgoing');
    expect(ringing).toContain('+49305550100');
    expect(ringing).toContain('in progress');
    expect(ringing).not.toContain('waiting');
    await page.setViewportSize({ width: 400, height: 900 });
    // At 400 px the columns stack: each cell is a block under its column's name.
    expect(
      await row(done)
        .locator('td')
        .first()
        .evaluate((cell) => getComputedStyle(cell).display),
    ).toBe('block');
    await page.screenshot({ path: shot('webhook-400.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.screenshot({ path: shot('webhook-1280.png'), fullPage: true });
  });
});

/**
 * The environment's click-to-call shown on the page where none is stored: a save of the settings form as the
 * browser posts it (the dial fields as shown) stores the other settings and copies nothing of the
 * environment's dial settings into the portal's record, so a later change of the environment applies.
 */
describe("the application page in webhook mode: the environment's click-to-call", () => {
  let h: Harness;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    h = await startHarness({ DIAL_MODE: 'ami', AMI_URL: 'tcp://crm:env-s3cret@127.0.0.1:5038' });
    browser = await launchChromium();
    page = await browser.newPage();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  it('is shown as set, and a save leaves it the environment’s', async () => {
    await page.goto(`${h.url}/app?LANG=en`);
    await page.fill('#token', ADMIN_TOKEN);
    await Promise.all([page.waitForNavigation(), page.press('#token', 'Enter')]);
    expect(await page.inputValue('#DIAL_MODE')).toBe('ami');
    expect(await page.textContent('label[for="AMI_URL"]')).toContain('tcp://127.0.0.1:5038');
    expect(await page.content()).not.toContain('env-s3cret');
    await page.fill('#defaultCountry', 'AT');
    await Promise.all([
      page.waitForNavigation(),
      page.click('#settings button[type="submit"]:not([formaction])'),
    ]);
    expect(await page.textContent('body')).toContain('Saved.');
    const record = h.app.get(PortalRegistry).record('sandbox');
    expect(record?.settings).toEqual({ defaultCountry: 'AT' });
    expect(await page.inputValue('#DIAL_MODE')).toBe('ami');
  });
});
