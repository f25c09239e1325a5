import { SandboxTenant } from '../../sandbox';
import { EslDouble } from '../support/esl-double';
import { eventually } from '../support/bridge-harness';
import { PortalPages } from './page-harness';
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
  const pages = PortalPages.use({
    portals: [{ name: 'alpha' }],
    temp: 'bridge-setup-esl-',
    viewport: { width: 400, height: 900 },
    onePage: true,
  });
  let alpha: SandboxTenant;
  let pbx: EslDouble;
  const portal = () => pages.portal(alpha);

  beforeAll(async () => {
    pbx = await EslDouble.start(SECRET);
    alpha = pages.tenant('alpha');
  });

  afterAll(async () => {
    await pbx?.close();
  });

  it('from an empty portal to the first call delivered, in German, within the side panel', async () => {
    const { frame } = await pages.open(alpha, { lang: 'de' });
    const steps = new SetupSteps(pages.page, frame, 'freeswitch');
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
