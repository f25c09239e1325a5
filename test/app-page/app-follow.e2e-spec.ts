import { createServer, Server, Socket } from 'node:net';
import { Frame } from 'playwright-core';
import { SandboxTenant } from '../../sandbox';
import { AmiDouble } from '../support/ami-double';
import { CdrDatabase } from '../support/cdr-database';
import { EslDouble } from '../support/esl-double';
import { ADMIN_TOKEN, eventually } from '../support/bridge-harness';
import { install, MultiBridge, startMultiBridge, tempDir } from '../support/multi-harness';
import { PortalPages } from './page-harness';
import { PortalFrameHost, readAgain, shot, submitIn, sessionOf } from './portal-frame';

const SECRET = 'follow-page-s3cret';
const WRONG = 'not-the-s3cret-at-all';

/**
 * The application page's PBX-events settings (`follow`) in a real browser, inside the portal's cross-site
 * frame as app-page.e2e-spec.ts opens it: the administrator points the bridge at an AMI double (real TCP,
 * the real protocol), tests the connection (ok; a wrong password named beside the field), a bad address is
 * refused beside its field with nothing stored, and the saved setting makes the bridge follow that PBX: a call
 * played on the double is delivered to the sandbox portal. The stored password never reaches the page; a
 * user who is no administrator gets no form and the server refuses a forged post. Sandbox users: 1 is the
 * administrator, 2 (Anna, extension 101) is not.
 */
describe('the application page: PBX-events settings (multi mode, headless Chromium)', () => {
  const pages = PortalPages.use({ portals: [{ name: 'alpha' }], temp: 'bridge-app-follow-' });
  let alpha: SandboxTenant;
  let pbx: AmiDouble;

  /** Sandbox users: 1 is the administrator, 2 (Anna) is not. */
  const ADMINISTRATOR = 1;
  const EMPLOYEE = 2;
  const open = (user: number, lang = 'en') => pages.open(alpha, { user, lang });
  const portal = () => pages.portal(alpha);
  const html = (frame: Frame) => pages.html(frame);

  beforeAll(async () => {
    pbx = await AmiDouble.start('crm-page', SECRET);
    alpha = pages.tenant('alpha');
  });

  afterAll(async () => {
    await pbx?.close();
  });

  it('tests the AMI connection as typed: ok, then a wrong password named beside the field; nothing stored', async () => {
    const { frame } = await open(ADMINISTRATOR);
    expect(await frame.textContent('#pbx-events h2')).toBe('PBX events');
    await frame.selectOption('#follow-PBX_EVENTS', 'ami');
    await frame.fill('#follow-AMI_URL', pbx.url());
    await submitIn(frame, '#test-follow');
    expect(await frame.textContent('#test-follow-AMI_URL')).toContain('accepted the login');
    expect(pbx.logins).toBe(1);
    // The form keeps the mode chosen, never the address typed.
    expect(await frame.inputValue('#follow-PBX_EVENTS')).toBe('ami');
    expect(await frame.inputValue('#follow-AMI_URL')).toBe('');

    await frame.fill('#follow-AMI_URL', pbx.url(WRONG));
    await submitIn(frame, '#test-follow');
    const refused = (await frame.textContent('#follow-AMI_URL ~ #test-follow-AMI_URL')) ?? '';
    expect(refused).toBe(
      `The PBX connection failed: login refused: the Asterisk Manager Interface at 127.0.0.1:${pbx.port} refused the user name or password`,
    );
    // The PBX's own words (`Authentication failed`) are not shown.
    expect(await html(frame)).not.toContain('Authentication failed');
    expect(await html(frame)).not.toContain(WRONG);
    expect(await html(frame)).not.toContain(SECRET);
    // A test stores nothing and follows nothing.
    expect((await portal()).settings.follow).toBeUndefined();
    expect(pbx.logins).toBe(1);
  });

  it('shows a bad address beside its field and changes nothing', async () => {
    const { frame } = await open(ADMINISTRATOR);
    await frame.selectOption('#follow-PBX_EVENTS', 'ami');
    await frame.fill('#follow-AMI_URL', `http://crm-page:${SECRET}@127.0.0.1:${pbx.port}`);
    await frame.fill('#follow-PBX_TRUNKS', 'PJSIP/trunk*');
    await submitIn(frame, '#pbx-events button:text("Save")');
    const error = frame.locator('#follow-AMI_URL ~ .field-error');
    expect(await error.textContent()).toContain(
      'must be tcp://user:secret@host:5038 or tls://user:secret@host:5039 (this one must start with tcp:// or tls://)',
    );
    expect(await frame.getAttribute('#follow-AMI_URL', 'aria-invalid')).toBe('true');
    expect(await frame.textContent('#pbx-events [role=alert]')).toContain('Nothing was saved');
    // What was typed stays, but the address (it holds a password) is never written back.
    expect(await frame.inputValue('#follow-PBX_TRUNKS')).toBe('PJSIP/trunk*');
    expect(await html(frame)).not.toContain(SECRET);
    // The same check as PATCH /v1/admin/portals: nothing stored. The test connection refuses it alike.
    expect((await portal()).settings.follow).toBeUndefined();
    await frame.fill('#follow-AMI_URL', 'tcp://no-password@127.0.0.1:5038');
    await submitIn(frame, '#test-follow');
    expect(await frame.textContent('#follow-AMI_URL ~ .field-error')).toContain('names no password');
    expect(await frame.$('#test-follow-AMI_URL')).toBeNull();
    await frame.evaluate(() => document.getElementById('pbx-events')?.scrollIntoView());
    await pages.page.screenshot({ path: shot('pbx-events-error-1280.png') });
  });

  it('tests the event socket and the CDR ledger too; a closed port, a silent one and another protocol answer alike', async () => {
    const esl = await EslDouble.start('esl-page-s3cret');
    const cdr = await CdrDatabase.create('app_page');
    // One port, three servers in turn: another protocol's banner (an SSH server), nothing, a silent one.
    const sockets = new Set<Socket>();
    const listen = async (server: Server, port = 0) => {
      server.on('connection', (socket) => sockets.add(socket.on('error', () => undefined)));
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
      return (server.address() as { port: number }).port;
    };
    const stop = async (server: Server) => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    };
    const ssh = createServer((socket) => socket.write('SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13\r\n'));
    const port = await listen(ssh);
    try {
      const { frame } = await open(ADMINISTRATOR);
      const test = async (mode: string, field: string, url: string) => {
        await frame.selectOption('#follow-PBX_EVENTS', mode);
        await frame.fill(`#follow-${field}`, url);
        await submitIn(frame, '#test-follow');
        return (await frame.textContent(`#follow-${field} ~ #test-follow-${field}`)) ?? '';
      };
      expect(await test('esl', 'ESL_URL', esl.url())).toContain('accepted the login');
      expect(await test('esl', 'ESL_URL', esl.url('wrong-esl-pass'))).toBe(
        `The PBX connection failed: login refused: the FreeSWITCH event socket at 127.0.0.1:${esl.port} refused the user name or password`,
      );
      expect(await test('cdr', 'ASTERISK_CDR_URL', cdr.url)).toContain('its cdr table can be read');
      // A real MariaDB refusing the password: said so, without its words (`Access denied for user …`).
      const wrong = new URL(cdr.url);
      wrong.password = 'wrong-cdr-pass';
      expect(await test('cdr', 'ASTERISK_CDR_URL', wrong.href)).toBe(
        'The PBX connection failed: login refused: the MySQL server at 127.0.0.1:3306 refused the user name or password',
      );
      expect(await html(frame)).not.toMatch(/Access denied|ER_ACCESS_DENIED|using password/);

      const ami = `tcp://crm:${SECRET}@127.0.0.1:${port}`;
      const unreachable = `The PBX connection failed: unreachable: no Asterisk Manager Interface answered at 127.0.0.1:${port} within 5000 ms (nothing listens there, something else does, or TLS failed)`;
      // Another protocol answers: the same words as nothing at all, never its banner.
      const banner = await test('ami', 'AMI_URL', ami);
      expect(banner).toBe(unreachable);
      expect(await test('esl', 'ESL_URL', `tcp://:${SECRET}@127.0.0.1:${port}`)).toBe(
        `The PBX connection failed: unreachable: no FreeSWITCH event socket answered at 127.0.0.1:${port} within 5000 ms (nothing listens there, something else does, or TLS failed)`,
      );
      expect(
        await test('cdr', 'ASTERISK_CDR_URL', `mysql://cdr:${SECRET}@127.0.0.1:${port}/asteriskcdrdb`),
      ).toBe(
        `The PBX connection failed: unreachable: no MySQL server answered at 127.0.0.1:${port} within 5000 ms (nothing listens there, something else does, or TLS failed)`,
      );
      expect(await html(frame)).not.toContain('OpenSSH');
      await stop(ssh);
      // Nothing listens on that port now: the same answer.
      expect(await test('ami', 'AMI_URL', ami)).toBe(banner);
      // Something accepts and says nothing: the same answer again.
      const silent = createServer(() => undefined);
      await listen(silent, port);
      try {
        expect(await test('ami', 'AMI_URL', ami)).toBe(banner);
      } finally {
        await stop(silent);
      }
      // TLS to a plaintext Manager port: the handshake fails, the same kind of answer.
      expect(await test('ami', 'AMI_URL', pbx.url().replace(/^tcp:/, 'tls:'))).toBe(
        `The PBX connection failed: unreachable: no Asterisk Manager Interface answered at 127.0.0.1:${pbx.port} within 5000 ms (nothing listens there, something else does, or TLS failed)`,
      );
      const shown = await html(frame);
      for (const secret of [
        SECRET,
        'esl-page-s3cret',
        'wrong-esl-pass',
        'wrong-cdr-pass',
        new URL(cdr.url).password,
      ]) {
        expect(shown).not.toContain(secret);
      }
      expect((await portal()).settings.follow).toBeUndefined();
    } finally {
      if (ssh.listening) await stop(ssh);
      await esl.close();
      await cdr.close();
    }
  }, 120_000);

  it('saves AMI following: the bridge follows the double, its call is delivered, the password never shown', async () => {
    const { frame } = await open(ADMINISTRATOR);
    await frame.selectOption('#follow-PBX_EVENTS', 'ami');
    await frame.fill('#follow-AMI_URL', pbx.url());
    await submitIn(frame, '#pbx-events button:text("Save")');
    expect(await frame.textContent('[role=status]')).toContain('Saved');
    expect((await portal()).settings.follow).toEqual({
      PBX_EVENTS: 'ami',
      target: `tcp://127.0.0.1:${pbx.port}`,
    });
    // Stored: shown as "set" with its address only; the field is empty, meaning "keep".
    expect(await frame.textContent('#follow-AMI_URL-state')).toBe(`set: tcp://127.0.0.1:${pbx.port}`);
    expect(await frame.inputValue('#follow-AMI_URL')).toBe('');
    expect(await html(frame)).not.toContain(SECRET);

    // Effective without a restart: the portal's runtime logs in to the double and follows it.
    const followed = await eventually(async () => {
      const body = await portal();
      return body.follow?.[0]?.connected ? body : undefined;
    }, 30_000);
    expect(followed.follow?.[0]).toMatchObject({ source: 'ami', followingHere: true });
    await pbx.play({ kind: 'inbound', from: '+4915199900011', to: '101', answeredBy: '101', talk: 42 }).done;
    const call = await eventually(() =>
      Promise.resolve(
        alpha.calls().find((candidate) => candidate.PHONE_NUMBER === '+4915199900011' && candidate.finished),
      ),
    );
    expect(call.finished).toMatchObject({ USER_ID: 2, DURATION: 42, STATUS_CODE: '200' });

    // The page shows the follower working and the call delivered.
    await readAgain(frame);
    expect(await frame.textContent('#connection tr:has-text("Following the PBX")')).toContain('working');
    expect(await frame.textContent('#calls')).toMatch(/delivered: 1\b/);

    // Saved again with the address left empty: the stored one is kept (a test with it logs in too).
    await frame.fill('#follow-PBX_TRUNKS', 'PJSIP/trunk*');
    await submitIn(frame, '#test-follow');
    expect(await frame.textContent('#test-follow-AMI_URL')).toContain('accepted the login');
    await frame.evaluate(() => document.getElementById('pbx-events')?.scrollIntoView());
    await pages.page.screenshot({ path: shot('pbx-events-1280.png') });
    await submitIn(frame, '#pbx-events button:text("Save")');
    expect(await frame.textContent('[role=status]')).toContain('Saved');
    expect((await portal()).settings.follow).toEqual({
      PBX_EVENTS: 'ami',
      target: `tcp://127.0.0.1:${pbx.port}`,
      PBX_TRUNKS: 'PJSIP/trunk*',
    });
    expect(await frame.inputValue('#follow-PBX_TRUNKS')).toBe('PJSIP/trunk*');
    expect(await html(frame)).not.toContain(SECRET);
    await eventually(async () => ((await portal()).follow?.[0]?.connected ? true : undefined), 30_000);
  }, 90_000);

  it('sets the line number and the dial details (AMI_CHANNEL…), a bad one refused beside its field', async () => {
    const { frame } = await open(ADMINISTRATOR);
    await frame.selectOption('#DIAL_MODE', 'ami');
    await frame.fill('#AMI_URL', pbx.url());
    await frame.fill('#AMI_CHANNEL', 'SIP/office');
    await submitIn(frame, '#settings button:text("Save")');
    expect(await frame.textContent('#AMI_CHANNEL ~ .field-error')).toContain(
      'AMI_CHANNEL must contain {extension}',
    );
    expect((await portal()).settings.dial).toBeUndefined();
    await frame.fill('#AMI_URL', pbx.url());
    await frame.fill('#AMI_CHANNEL', 'SIP/{extension}');
    await frame.fill('#lineNumber', 'office-1');
    await submitIn(frame, '#settings button:text("Save")');
    expect(await frame.textContent('[role=status]')).toContain('Saved');
    const settings = (await portal()).settings;
    expect(settings.lineNumber).toBe('office-1');
    expect(settings.dial).toMatchObject({ DIAL_MODE: 'ami' });
    expect(await frame.inputValue('#AMI_CHANNEL')).toBe('SIP/{extension}');
    expect(await frame.inputValue('#lineNumber')).toBe('office-1');
    expect(await frame.inputValue('#AMI_URL')).toBe('');
    expect(await html(frame)).not.toContain(SECRET);
  });

  it('gives a user who is no administrator no form, and refuses a forged post', async () => {
    const { frame } = await open(EMPLOYEE);
    expect(await frame.textContent('#read-only')).toContain('only a portal administrator');
    expect(await frame.$('#pbx-events button')).toBeNull();
    expect(await frame.getAttribute('#follow-AMI_URL', 'disabled')).not.toBeNull();
    expect(await frame.getAttribute('#follow-PBX_EVENTS', 'disabled')).not.toBeNull();
    expect(await html(frame)).not.toContain(SECRET);
    const before = (await portal()).settings;
    const session = await sessionOf(frame);
    const logins = pbx.logins;
    for (const action of ['follow', 'test-follow']) {
      const forged = await pages.bridge.http
        .post(`/app/${action}`)
        .type('form')
        .send({ session, PBX_EVENTS: 'ami', AMI_URL: pbx.url(WRONG) });
      expect(forged.status).toBe(403);
    }
    expect((await portal()).settings).toEqual(before);
    expect(pbx.logins).toBe(logins);
  });

  it('speaks German and Russian, and fits the side panel (400 px)', async () => {
    await pages.page.setViewportSize({ width: 400, height: 900 });
    const german = await open(ADMINISTRATOR, 'de');
    expect(await german.frame.textContent('#pbx-events h2')).toBe('PBX-Ereignisse');
    const russian = await open(ADMINISTRATOR, 'ru');
    expect(await russian.frame.textContent('#pbx-events h2')).toBe('События АТС');
    const english = await open(ADMINISTRATOR);
    const overflow = await english.frame.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect(overflow).toBeLessThanOrEqual(0);
    await english.frame.evaluate(() => document.getElementById('pbx-events')?.scrollIntoView());
    await pages.page.screenshot({ path: shot('pbx-events-400.png') });
  });

  /**
   * SPEC §8 through the page (TENANT_ALLOWED_NETWORKS=''): an address of this deployment or its network is
   * refused beside its field, for "test connection" as for "save", before any socket; a name resolving to
   * loopback is refused too (at save once the save path resolves names; until then the test's connection
   * is refused by the egress gate: `not allowed`). A TCP server on 127.0.0.1 counts what reaches it: nothing.
   */
  describe('a hostile address (TENANT_ALLOWED_NETWORKS unset)', () => {
    let strict: MultiBridge;
    let strictTemp: { dir: string; remove(): void };
    let strictHost: PortalFrameHost;
    let beta: SandboxTenant;
    let counter: Server;
    let port: number;
    let accepted = 0;
    const counted = new Set<Socket>();

    beforeAll(async () => {
      counter = createServer((socket) => {
        accepted++;
        counted.add(socket.on('error', () => undefined));
        socket.destroy();
      });
      await new Promise<void>((resolve) => counter.listen(0, '127.0.0.1', resolve));
      port = (counter.address() as { port: number }).port;
      strictHost = await PortalFrameHost.start();
      beta = pages.sandbox.addPortal({ name: 'beta', domain: `localhost:${strictHost.port}` });
      strictTemp = tempDir('bridge-app-follow-strict-');
      strict = await startMultiBridge(pages.sandbox, strictTemp.dir, {
        TENANT_ALLOWED_NETWORKS: '',
        LOG_LEVEL: process.env.DEBUG_LOG ?? 'error',
      });
      expect(await install(beta, strict.url)).toBe(200);
    }, 60_000);

    afterAll(async () => {
      await strict?.close();
      await strictHost?.close();
      for (const socket of counted) socket.destroy();
      await new Promise((resolve) => counter?.close(resolve));
      strictTemp?.remove();
    });

    const openBeta = () =>
      strictHost.open(pages.page, {
        bridgeUrl: strict.url,
        authId: beta.issueTokens(undefined, 1)?.access_token ?? '',
        memberId: beta.memberId,
        domain: beta.domain,
        lang: 'en',
      });
    const betaFollow = async () =>
      (
        await strict.http
          .get(`/v1/admin/portals/${beta.memberId}`)
          .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
      ).body.settings.follow;

    it('refuses loopback, private, link-local and metadata addresses beside the field, tested or saved', async () => {
      const { frame } = await openBeta();
      for (const [mode, field, url] of [
        ['ami', 'AMI_URL', `tcp://crm:${SECRET}@127.0.0.1:${port}`],
        ['ami', 'AMI_URL', `tls://crm:${SECRET}@[::1]:${port}`],
        ['ami', 'AMI_URL', `tls://crm:${SECRET}@169.254.169.254:80`],
        ['esl', 'ESL_URL', `tls://:${SECRET}@10.0.0.9:8021`],
        ['cdr', 'ASTERISK_CDR_URL', `mysql://cdr:${SECRET}@127.0.0.1:${port}/asteriskcdrdb?ssl=true`],
        // Credentials in clear to a public address.
        ['ami', 'AMI_URL', `tcp://crm:${SECRET}@203.0.113.7:5038`],
      ]) {
        for (const button of ['#test-follow', '#pbx-events button:text("Save")']) {
          await frame.selectOption('#follow-PBX_EVENTS', mode);
          await frame.fill(`#follow-${field}`, url);
          await submitIn(frame, button);
          expect(await frame.textContent(`#follow-${field} ~ .field-error`)).toMatch(
            new RegExp(`^follow\\.${field}: `),
          );
          expect(await frame.$(`#test-follow-${field}`)).toBeNull();
          expect(await html(frame)).not.toContain(SECRET);
        }
      }
      expect(await betaFollow()).toBeUndefined();
      expect(accepted).toBe(0);
    });

    it('a name resolving to loopback: refused (at save once names are resolved there, else by the gate), never connected', async () => {
      const { frame } = await openBeta();
      for (const [mode, field, url] of [
        ['ami', 'AMI_URL', `tls://crm:${SECRET}@localhost:${port}`],
        ['esl', 'ESL_URL', `tls://:${SECRET}@localhost:${port}`],
        [
          'cdr',
          'ASTERISK_CDR_URL',
          `mysql://cdr:${SECRET}@localhost:${port}/asteriskcdrdb?ssl=true`,
          'MySQL server',
        ],
      ]) {
        await frame.selectOption('#follow-PBX_EVENTS', mode);
        await frame.fill(`#follow-${field}`, url);
        await submitIn(frame, '#test-follow');
        const refusedAtSave = await frame.$(`#follow-${field} ~ .field-error`);
        if (refusedAtSave) {
          expect(await refusedAtSave.textContent()).toContain(
            `follow.${field}: localhost:${port} resolves to`,
          );
        } else {
          expect(await frame.textContent(`#follow-${field} ~ #test-follow-${field}`)).toBe(
            `The PBX connection failed: not allowed: localhost:${port} is in a range this deployment does not let a portal's settings reach`,
          );
        }
        expect(await html(frame)).not.toContain(SECRET);
      }
      expect(await betaFollow()).toBeUndefined();
      expect(accepted).toBe(0);
    });
  });
});
