import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Frame } from 'playwright-core';
import { SandboxTenant } from '../../sandbox';
import { AmiDouble } from '../support/ami-double';
import { CdrDatabase } from '../support/cdr-database';
import { eventually } from '../support/bridge-harness';
import { PortalPages } from './page-harness';
import { SetupSteps, writeSetupFigure } from './setup-support';

const SECRET = 'setup-freepbx-s3cret';
const WRONG = 'not-the-manager-secret';

/**
 * The guided setup (docs/decisions/app-page.md, "The first hour") in a real browser inside the portal's
 * cross-site frame, many portals (multi mode), FreePBX: from an empty portal the page opens on "which phone
 * system"; FreePBX's questions come with the manager user's snippet (the read-only rights, `permit=` the
 * bridge's address); "save and test" stores SPEC's settings (PBX_EVENTS ami, AMI_URL) through the admin API's
 * check and logs in to an AMI double (real TCP, the real protocol); the lines step shows the line the PBX
 * used; "done" shows the first call delivered to the sandbox portal. A wrong password is said in words. The
 * happy path's clicks and fields are counted into docs/app-page/setup-figures.json.
 */
describe('the guided setup: FreePBX, multi mode (headless Chromium)', () => {
  const pages = PortalPages.use({
    portals: [{ name: 'alpha' }, { name: 'beta' }],
    temp: 'bridge-setup-freepbx-',
  });
  let alpha: SandboxTenant;
  let beta: SandboxTenant;
  let pbx: AmiDouble;

  const openAs = (tenant: SandboxTenant) => pages.open(tenant);
  const portal = (tenant: SandboxTenant) => pages.portal(tenant);
  const html = (frame: Frame) => pages.html(frame);

  beforeAll(async () => {
    pbx = await AmiDouble.start('crm-bridge', SECRET);
    alpha = pages.tenant('alpha');
    beta = pages.tenant('beta');
  });

  afterAll(async () => {
    await pbx?.close();
  });

  it('from an empty portal to the first call delivered: system, questions, test, lines, done', async () => {
    const { frame } = await openAs(alpha);
    const steps = new SetupSteps(pages.page, frame, 'freepbx');
    // An empty portal opens on the setup's first question, before everything else.
    expect(await frame.textContent('main > section:first-of-type h3')).toBe(
      'Which phone system do you have?',
    );
    await steps.screenshot('setup-1');

    await steps.press('#system-freepbx');
    expect(await frame.textContent('#setup-step')).toBe('Step 2 of 5');
    // The snippet names the read-only rights and permits the bridge's address, as the PBX will see it.
    const conf = (await frame.textContent('#manager-conf')) ?? '';
    expect(conf).toContain('[crm-bridge]');
    expect(conf).toContain('permit = 127.0.0.1/255.255.255.255');
    expect(conf).toContain('read = system,call,agent,cdr,dialplan');
    expect(conf).toContain('write = reporting');
    expect(await frame.isChecked('#right-read-cdr')).toBe(true);
    expect(await frame.textContent('#bridge-address')).toContain('127.0.0.1');
    // Words, not environment names: the label is plain, the setting's name a small hint.
    expect(await frame.textContent('label[for="setup-host"]')).toBe("The PBX's address (stored as AMI_URL)");
    await steps.screenshot('setup-2');

    await steps.fill('#setup-host', '127.0.0.1');
    await steps.fill('#setup-port', String(pbx.port));
    await steps.fill('#setup-password', SECRET);
    await steps.press('#setup-save');
    expect(await frame.textContent('#test-words')).toContain("accepted the bridge's login");
    expect((await portal(alpha)).settings.follow).toEqual({
      PBX_EVENTS: 'ami',
      target: `tcp://127.0.0.1:${pbx.port}`,
    });
    expect(await html(frame)).not.toContain(SECRET);
    await steps.screenshot('setup-3');

    // Effective at once: the portal's runtime follows the double; a call played on it is delivered.
    await eventually(async () => ((await portal(alpha)).follow?.[0]?.connected ? true : undefined), 30_000);
    await pbx.play({ kind: 'inbound', from: '+4915199900042', to: '101', answeredBy: '101', talk: 12 }).done;
    const call = await eventually(() =>
      Promise.resolve(
        alpha.calls().find((candidate) => candidate.PHONE_NUMBER === '+4915199900042' && candidate.finished),
      ),
    );
    expect(call.finished).toMatchObject({ USER_ID: 2, DURATION: 12 });
    steps.mark('firstCall');

    await steps.press('#setup-next');
    // The line the call was filed under on the portal, with today's call on it, named here.
    const number = call.LINE_NUMBER;
    const line = frame.locator(`form.line[data-line="${number}"]`);
    expect(await line.locator('.line-count').textContent()).toBe("today's calls: 1");
    await steps.fill(`form.line[data-line="${number}"] input[name="name"]`, 'Main number');
    await steps.press(`form.line[data-line="${number}"] button[type=submit]`);
    expect(await frame.textContent('[role=status]')).toContain('The line is saved.');
    expect((await portal(alpha)).settings.lines).toEqual([
      { number, name: 'Main number', report: true, crmCreate: true },
    ]);
    await steps.screenshot('setup-4');

    await steps.press('#setup-done');
    expect(await frame.textContent('#done-counts')).toMatch(/delivered: 1\b/);
    await steps.screenshot('setup-5');
    writeSetupFigure('freepbx', 'multi', steps.count());
  }, 120_000);

  it('says in words what a wrong password means, and what to check; nothing secret on the page', async () => {
    const { frame } = await openAs(beta);
    const steps = new SetupSteps(pages.page, frame, 'freepbx-wrong');
    await steps.press('#system-freepbx');
    await steps.fill('#setup-host', '127.0.0.1');
    await steps.fill('#setup-port', String(pbx.port));
    await steps.fill('#setup-password', WRONG);
    await steps.press('#setup-save');
    const words = (await frame.textContent('#test-words')) ?? '';
    expect(words).toContain('the user name or the password is wrong');
    expect(words).toContain('Asterisk Manager Users');
    expect(words).toContain('Permit names 127.0.0.1');
    expect(await html(frame)).not.toContain(WRONG);
    expect(await html(frame)).not.toContain('Authentication failed');
    // Back to the answers: what was typed stays (never the password), the stored one is kept if left empty.
    await steps.press('#setup-change');
    expect(await frame.inputValue('#setup-host')).toBe('127.0.0.1');
    expect(await frame.inputValue('#setup-password')).toBe('');
    expect(await frame.textContent('#password-help')).toContain('Leave empty to keep');
    await steps.fill('#setup-password', SECRET);
    // Click-to-call too: the dial settings from the same address and user.
    await steps.choose('#setup-click-yes');
    expect(await frame.isChecked('#setup-click-yes')).toBe(true);
    await steps.press('#setup-save');
    expect(await frame.textContent('#test-words')).toContain("accepted the bridge's login");
    expect((await portal(beta)).settings.dial).toMatchObject({ DIAL_MODE: 'ami' });
    expect(await html(frame)).not.toContain(SECRET);
  }, 60_000);

  it('says in words that nothing answered at a closed port, and what to check', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const { frame } = await openAs(beta);
    const steps = new SetupSteps(pages.page, frame, 'freepbx-closed');
    await steps.press('#setup-link');
    await steps.press('#system-freepbx');
    // The stored answers come back (never the password: left empty, the stored one is kept).
    expect(await frame.inputValue('#setup-host')).toBe('127.0.0.1');
    expect(await frame.isChecked('#setup-click-yes')).toBe(true);
    await steps.fill('#setup-port', String(port));
    await steps.press('#setup-save');
    const words = (await frame.textContent('#test-words')) ?? '';
    expect(words).toContain(`No PBX answered at 127.0.0.1:${port} within 5 seconds.`);
    expect(words).toContain("that the PBX's firewall lets 127.0.0.1 in on that port");
    expect(await frame.$('#setup-next')).toBeNull();
    await steps.screenshot('setup-3-unreachable');
  }, 60_000);

  it('reads the CDR database beside the manager interface when its user is given: tested too', async () => {
    const cdr = await CdrDatabase.create('setup_page');
    try {
      const url = new URL(cdr.url);
      const { frame } = await openAs(beta);
      const steps = new SetupSteps(pages.page, frame, 'freepbx-cdr');
      await steps.press('#setup-link');
      await steps.press('#system-freepbx');
      await steps.fill('#setup-port', String(pbx.port));
      await steps.fill('#setup-cdrUser', decodeURIComponent(url.username));
      await steps.fill('#setup-cdrPassword', decodeURIComponent(url.password));
      await steps.fill('#setup-cdrName', cdr.name);
      await steps.press('#setup-save');
      expect(await frame.textContent('#test-words')).toContain("accepted the bridge's login");
      expect(await frame.textContent('#test-ledger')).toBe('The call records database answered too.');
      expect((await portal(beta)).settings.follow).toMatchObject({ PBX_EVENTS: 'ami' });
      expect(await html(frame)).not.toContain(decodeURIComponent(url.password));
    } finally {
      await cdr.close();
    }
  }, 60_000);

  it('refuses a bad address beside its field and stores nothing', async () => {
    const { frame } = await openAs(beta);
    const steps = new SetupSteps(pages.page, frame, 'freepbx-bad');
    await steps.press('#setup-link');
    await steps.press('#system-freepbx');
    await steps.fill('#setup-host', 'pbx example com');
    await steps.fill('#setup-password', SECRET);
    const before = (await portal(beta)).settings.follow;
    await steps.press('#setup-save');
    expect(await frame.textContent('#host-error')).toContain('a host name or an IP address');
    expect(await frame.getAttribute('#setup-host', 'aria-invalid')).toBe('true');
    expect((await portal(beta)).settings.follow).toEqual(before);
  });
});
