import { Browser, BrowserContext, Page } from 'playwright-core';
import { SandboxPortal, SandboxTenant } from '../../sandbox';
import { EslDouble } from '../support/esl-double';
import { ADMIN_TOKEN, eventually } from '../support/bridge-harness';
import { install, MultiBridge, startMultiBridge, tempDir } from '../support/multi-harness';
import { launchChromium, PortalFrameHost } from './portal-frame';
import { SetupSteps, writeSetupFigure } from './setup-support';

const SECRET = 'setup-esl-s3cret';

/**
 * The guided setup for FreeSWITCH (multi mode), in German and in the portal's side panel (400 px), from an
 * empty portal to the first call delivered: the event socket's snippet with `apply-inbound-acl` and the ACL
 * list naming the bridge's address; "save and test" stores PBX_EVENTS esl and ESL_URL and logs in to an
 * event socket double (real TCP, the real protocol); a call played on it reaches the sandbox portal. The
 * page never grows wider than the panel.
 */
describe('the guided setup: FreeSWITCH, multi mode, German at 400 px (headless Chromium)', () => {
  let sandbox: SandboxPortal;
  let bridge: MultiBridge;
  let temp: { dir: string; remove(): void };
  let host: PortalFrameHost;
  let alpha: SandboxTenant;
  let pbx: EslDouble;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  const portal = async () =>
    (
      await bridge.http
        .get(`/v1/admin/portals/${alpha.memberId}`)
        .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
    ).body;

  beforeAll(async () => {
    pbx = await EslDouble.start(SECRET);
    host = await PortalFrameHost.start();
    sandbox = await SandboxPortal.start();
    alpha = sandbox.addPortal({ name: 'alpha', domain: `localhost:${host.port}` });
    temp = tempDir('bridge-setup-esl-');
    bridge = await startMultiBridge(sandbox, temp.dir, {
      DELIVERY_MAX_BACKOFF_SEC: '1',
      LOG_LEVEL: process.env.DEBUG_LOG ?? 'error',
    });
    expect(await install(alpha, bridge.url)).toBe(200);
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 400, height: 900 } });
    page = await context.newPage();
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await bridge?.close();
    await sandbox?.close();
    await host?.close();
    await pbx?.close();
    temp?.remove();
  });

  it('from an empty portal to the first call delivered, in German, within the side panel', async () => {
    const { frame } = await host.open(page, {
      bridgeUrl: bridge.url,
      authId: alpha.issueTokens(undefined, 1)?.access_token ?? '',
      memberId: alpha.memberId,
      domain: alpha.domain,
      lang: 'de',
    });
    const steps = new SetupSteps(page, frame, 'freeswitch');
    const overflow = () =>
      frame.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(await frame.textContent('#which-system')).toBe('Welche Telefonanlage haben Sie?');
    expect(await overflow()).toBeLessThanOrEqual(0);

    await steps.press('#system-freeswitch');
    expect(await frame.textContent('#setup-step')).toBe('Schritt 2 von 5');
    expect(await frame.textContent('#event-socket-conf')).toContain(
      '<param name="apply-inbound-acl" value="crm-bridge"/>',
    );
    expect(await frame.textContent('#acl-conf')).toContain('<node type="allow" cidr="127.0.0.1/32"/>');
    expect(await frame.textContent('label[for="setup-password"]')).toBe('Passwort des Event-Sockets');
    expect(await overflow()).toBeLessThanOrEqual(0);
    await steps.screenshot('setup-2');

    await steps.fill('#setup-host', '127.0.0.1');
    await steps.fill('#setup-port', String(pbx.port));
    await steps.fill('#setup-password', SECRET);
    await steps.press('#setup-save');
    expect(await frame.textContent('#test-words')).toContain('Anmeldung der Brücke angenommen');
    expect((await portal()).settings.follow).toEqual({
      PBX_EVENTS: 'esl',
      target: `tcp://127.0.0.1:${pbx.port}`,
    });
    expect(await frame.content()).not.toContain(SECRET);
    await steps.screenshot('setup-3');

    await eventually(async () => ((await portal()).follow?.[0]?.connected ? true : undefined), 30_000);
    await pbx.play({ kind: 'inbound', from: '+4915199900077', to: '101', answeredBy: '101', talk: 9 }).done;
    const call = await eventually(() =>
      Promise.resolve(
        alpha.calls().find((candidate) => candidate.PHONE_NUMBER === '+4915199900077' && candidate.finished),
      ),
    );
    expect(call.finished).toMatchObject({ USER_ID: 2, DURATION: 9 });
    steps.mark('firstCall');

    await steps.press('#setup-next');
    expect(await frame.textContent(`form.line[data-line="${call.LINE_NUMBER}"] .line-count`)).toBe(
      'heutige Anrufe: 1',
    );
    expect(await overflow()).toBeLessThanOrEqual(0);
    await steps.screenshot('setup-4');
    await steps.press('#setup-done');
    expect(await frame.textContent('#done-counts')).toMatch(/zugestellt: 1\b/);
    expect(await overflow()).toBeLessThanOrEqual(0);
    await steps.screenshot('setup-5');
    writeSetupFigure('freeswitch', 'multi', steps.count());
  }, 120_000);
});
