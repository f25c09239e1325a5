import { Browser, Page } from 'playwright-core';
import { EslDouble } from '../support/esl-double';
import {
  ADMIN_TOKEN,
  ended,
  eventually,
  Harness,
  PBX_TOKEN,
  started,
  startHarness,
} from '../support/bridge-harness';
import { launchChromium, submitIn } from './portal-frame';
import { SetupSteps, writeSetupFigure } from './setup-support';

const SECRET = 'setup-single-esl-s3cret';

/**
 * The guided setup with one portal (webhook mode: the page behind ADMIN_TOKEN, its settings stored with
 * the portal as the single-portal page keeps them), FreeSWITCH, from an empty portal to the first call
 * delivered: signed in, the page opens on "which phone system"; the event socket's questions; "save and
 * test" logs in to an event socket double (real TCP); the bridge follows it without a restart and a call
 * played on it reaches the sandbox portal; the lines step shows its line; "done" shows it delivered. A line's
 * rule saved on the overview is the portal's stored `lines` and applies to the next call.
 */
describe('the guided setup: FreeSWITCH, one portal (headless Chromium)', () => {
  let h: Harness;
  let pbx: EslDouble;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    pbx = await EslDouble.start(SECRET);
    // PBX_TOKENS is set (a PBX may post): with no call yet and nothing followed, the setup still opens first.
    h = await startHarness();
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await h?.close();
    await pbx?.close();
  });

  it('from an empty portal to the first call delivered', async () => {
    await page.goto(`${h.url}/app?LANG=en`);
    const steps = new SetupSteps(page, page.mainFrame(), 'single-freeswitch');
    await steps.fill('#token', ADMIN_TOKEN);
    await steps.press('#token');
    expect(await page.textContent('#which-system')).toBe('Which phone system do you have?');

    await steps.press('#system-freeswitch');
    expect(await page.textContent('#acl-conf')).toContain('<node type="allow" cidr="127.0.0.1/32"/>');
    await steps.fill('#setup-host', '127.0.0.1');
    await steps.fill('#setup-port', String(pbx.port));
    await steps.fill('#setup-password', SECRET);
    await steps.press('#setup-save');
    expect(await page.textContent('#test-words')).toContain("accepted the bridge's login");
    expect(await page.content()).not.toContain(SECRET);
    await steps.screenshot('setup-3');

    const played = pbx.play({
      kind: 'inbound',
      from: '+4915199900088',
      to: '101',
      answeredBy: '101',
      talk: 7,
    });
    await played.done;
    const call = await eventually(async () => {
      const found = h.sandbox.calls({ EXTERNAL_CALL_ID: played.callId })[0];
      return found?.finished ? found : undefined;
    }, 30_000);
    expect(call.finished).toMatchObject({ DURATION: 7 });
    steps.mark('firstCall');

    await steps.press('#setup-next');
    expect(await page.textContent(`form.line[data-line="${call.LINE_NUMBER}"] .line-count`)).toBe(
      "today's calls: 1",
    );
    await steps.press('#setup-done');
    expect(await page.textContent('#done-counts')).toMatch(/delivered: 1\b/);
    await steps.screenshot('setup-5');
    writeSetupFigure('freeswitch', 'single', steps.count());
  }, 120_000);

  it("a line's rule saved on the overview applies to the next call: report off keeps it off the portal", async () => {
    await page.goto(`${h.url}/app?LANG=en`);
    await page.fill('#token', ADMIN_TOKEN);
    await submitIn(page.mainFrame(), '#token');
    const form = 'form.line[data-line="+493055501234"]';
    const first = `single-line-1-${Date.now()}`;
    const post = (callId: string) =>
      h.http
        .post('/v1/calls/events')
        .set('Authorization', `Bearer ${PBX_TOKEN}`)
        .send([started(callId, { line: '+49 30 555 01234' }), ended(callId)]);
    const state = async (callId: string) =>
      (await h.http.get(`/v1/calls/${callId}`).set('Authorization', `Bearer ${PBX_TOKEN}`)).body.state;
    expect((await post(first)).status).toBe(202);
    await eventually(async () => ((await state(first)) === 'finished' ? true : undefined), 30_000);
    await submitIn(page.mainFrame(), '#refresh');
    expect(await page.textContent(`${form} .line-count`)).toBe("today's calls: 1");
    await page.selectOption(`${form} select[name="report"]`, 'no');
    await submitIn(page.mainFrame(), `${form} button[type=submit]`);
    expect(await page.textContent('[role=status]')).toContain('The line is saved.');
    const next = `single-line-2-${Date.now()}`;
    expect((await post(next)).status).toBe(202);
    await eventually(async () => ((await state(next)) === 'ignored' ? true : undefined), 30_000);
    expect(h.sandbox.calls({ EXTERNAL_CALL_ID: next })).toEqual([]);
  }, 60_000);
});
