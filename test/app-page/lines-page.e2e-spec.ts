import { SandboxTenant } from '../../sandbox';
import { ended, eventually, started } from '../support/bridge-harness';
import { pbxTokenFor } from '../support/multi-harness';
import { PortalPages } from './page-harness';
import { readAgain, sessionOf, shot, submitIn } from './portal-frame';

const MAIN = '+493011112222';
const SUPPORT = '+493033334444';

/**
 * The lines on the application's page (SPEC §11's last point) in a real browser, inside the portal's frame
 * (multi mode): every line seen with today's calls on it, busiest first; a bad rule is a 400 naming the line
 * and the field, shown beside the field with nothing stored; a good one is stored as the portal's `lines`
 * setting and applied to the next call (report off: the call is `ignored`, never sent to the portal).
 */
describe('the lines on the application page (multi mode, headless Chromium)', () => {
  const pages = PortalPages.use({ portals: [{ name: 'alpha' }], temp: 'bridge-lines-page-' });
  let alpha: SandboxTenant;
  let token: string;

  const open = (user = 1) => pages.open(alpha, { user });
  const settings = async () => (await pages.portal(alpha)).settings;
  const post = (callId: string, line: string) =>
    pages.bridge.http
      .post('/v1/calls/events')
      .set('Authorization', `Bearer ${token}`)
      .send([started(callId, { line }), ended(callId)]);
  const stateOf = async (callId: string) =>
    (await pages.bridge.http.get(`/v1/calls/${callId}`).set('Authorization', `Bearer ${token}`)).body.state;

  beforeAll(async () => {
    alpha = pages.tenant('alpha');
    token = await pbxTokenFor(pages.bridge, alpha.memberId);
    const run = Date.now();
    for (const [callId, line] of [
      [`main-1-${run}`, '+49 30 1111 2222'],
      [`main-2-${run}`, MAIN],
      [`support-1-${run}`, SUPPORT],
    ]) {
      expect((await post(callId, line)).status).toBe(202);
      await eventually(async () => ((await stateOf(callId)) === 'finished' ? true : undefined), 30_000);
    }
  }, 90_000);

  it("lists every line seen with today's calls, busiest first", async () => {
    const { frame } = await open();
    const lines = frame.locator('#lines form.line');
    expect(await lines.evaluateAll((forms) => forms.map((form) => form.getAttribute('data-line')))).toEqual([
      MAIN,
      SUPPORT,
    ]);
    expect(await frame.textContent(`form.line[data-line="${MAIN}"] .line-count`)).toBe("today's calls: 2");
    expect(await frame.textContent(`form.line[data-line="${SUPPORT}"] .line-count`)).toBe("today's calls: 1");
    // Every control has its label.
    for (const id of await frame.$$eval('#lines select, #lines input:not([type=hidden])', (all) =>
      all.map((control) => control.id),
    )) {
      expect(await frame.$(`label[for="${id}"]`)).not.toBeNull();
    }
  });

  it('shows a bad rule beside its field (400 naming line and field) and stores nothing', async () => {
    const { frame } = await open();
    await frame.fill(`form.line[data-line="${MAIN}"] input[name="crmSource"]`, 'not a source!');
    await submitIn(frame, `form.line[data-line="${MAIN}"] button[type=submit]`);
    const error = frame.locator(`form.line[data-line="${MAIN}"] input[name="crmSource"] + .field-error`);
    expect(await error.textContent()).toContain(`lines[0] (${MAIN}): crmSource must be a lead source id`);
    expect(
      await frame.getAttribute(`form.line[data-line="${MAIN}"] input[name="crmSource"]`, 'aria-invalid'),
    ).toBe('true');
    expect(await frame.inputValue(`form.line[data-line="${MAIN}"] input[name="crmSource"]`)).toBe(
      'not a source!',
    );
    expect((await settings()).lines).toBeUndefined();
    await frame.evaluate(() => document.getElementById('lines')?.scrollIntoView());
    await pages.page.screenshot({ path: shot('lines-error-1280.png') });
    // The server's answer to the same post is a 400 naming the line and the field.
    const answer = await pages.bridge.http
      .post('/app/lines')
      .type('form')
      .send({ session: await sessionOf(frame), number: MAIN, crmSource: 'not a source!' });
    expect(answer.status).toBe(400);
    expect(answer.text).toContain(`lines[0] (${MAIN}): crmSource must be a lead source id`);
  });

  it('saves a rule and applies it to the next call: report off keeps it off the portal', async () => {
    const { frame } = await open();
    const support = `form.line[data-line="${SUPPORT}"]`;
    await frame.fill(`${support} input[name="name"]`, 'Support');
    await frame.selectOption(`${support} select[name="report"]`, 'no');
    await submitIn(frame, `${support} button[type=submit]`);
    expect(await frame.textContent('[role=status]')).toContain('The line is saved.');
    expect((await settings()).lines).toEqual([
      { number: SUPPORT, name: 'Support', crmCreate: true, report: false },
    ]);
    expect(await frame.textContent(`${support} h3`)).toContain(`Support · ${SUPPORT}`);
    expect(await frame.inputValue(`${support} select[name="report"]`)).toBe('no');

    const callId = `support-2-${Date.now()}`;
    expect((await post(callId, SUPPORT)).status).toBe(202);
    await eventually(async () => ((await stateOf(callId)) === 'ignored' ? true : undefined), 30_000);
    // A call after it on the other line is delivered: the portal never got the ignored one.
    const next = `main-3-${Date.now()}`;
    expect((await post(next, MAIN)).status).toBe(202);
    await eventually(async () => ((await stateOf(next)) === 'finished' ? true : undefined), 30_000);
    expect(alpha.calls().some((call) => call.EXTERNAL_CALL_ID === callId)).toBe(false);

    await readAgain(frame);
    expect(await frame.textContent(`${support} .line-count`)).toBe("today's calls: 2");
    await frame.evaluate(() => document.getElementById('lines')?.scrollIntoView());
    await pages.page.screenshot({ path: shot('lines-1280.png') });
  }, 90_000);

  it('shows a user who is no administrator the lines without a way to change them, nor the setup', async () => {
    const { frame } = await open(2);
    expect(await frame.textContent(`form.line[data-line="${MAIN}"] .line-count`)).toMatch(
      /today's calls: \d/,
    );
    expect(await frame.$('#lines button')).toBeNull();
    expect(await frame.isDisabled(`form.line[data-line="${MAIN}"] input[name="name"]`)).toBe(true);
    const forged = await pages.bridge.http
      .post('/app/lines')
      .type('form')
      .send({ session: await sessionOf(frame), number: MAIN, report: 'no' });
    expect(forged.status).toBe(403);
    // Nor the guided setup: no way in, and the server refuses its steps.
    expect(await frame.$('#setup-link')).toBeNull();
    const setup = await pages.bridge.http
      .post('/app/setup/connect')
      .type('form')
      .send({ session: await sessionOf(frame), system: 'freepbx', host: '127.0.0.1', password: 'x' });
    expect(setup.status).toBe(403);
    expect((await settings()).follow).toBeUndefined();
  });
});
