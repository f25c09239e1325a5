import { SandboxTenant } from '../../sandbox';
import { ended, eventually, started } from '../support/bridge-harness';
import { PortalPages } from './page-harness';
import { SetupSteps } from './setup-support';

/**
 * The guided setup for a PBX that posts to the bridge (multi mode): Yeastar's webhook URL and the JSON
 * API's address, each with a PBX token created right there and shown once; what the page says to paste is
 * what the bridge takes: a post to it is stored and its call delivered to the sandbox portal.
 */
describe('the guided setup: a PBX that posts (Yeastar, another), multi mode (headless Chromium)', () => {
  const pages = PortalPages.use({ portals: [{ name: 'alpha' }], temp: 'bridge-setup-posting-' });
  let alpha: SandboxTenant;
  const open = () => pages.open(alpha);

  beforeAll(() => {
    alpha = pages.tenant('alpha');
  });

  it("Yeastar: the webhook URL with a token made right there; Yeastar's post to it is delivered", async () => {
    const { frame } = await open();
    const steps = new SetupSteps(pages.page, frame, 'yeastar');
    await steps.press('#system-yeastar');
    expect(await frame.textContent('#paste-url')).toBe(
      `${pages.bridge.url}/v1/pbx/yeastar?token=YOUR_PBX_TOKEN`,
    );
    await steps.press('#setup-token');
    expect(await frame.textContent('#token-once')).toContain('shown this once');
    const url = (await frame.textContent('#paste-url')) ?? '';
    expect(url).toMatch(new RegExp(`^${pages.bridge.url}/v1/pbx/yeastar\\?token=pbx_`));
    await steps.screenshot('setup-2');
    const token = new URL(url).searchParams.get('token') ?? '';

    const callId = `1795338000.${Date.now() % 1000}`;
    const posted = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        type: 30012,
        msg: {
          call_id: callId,
          time_start: '2026-11-22 10:00:00',
          call_from: '015112345679',
          call_to: '102',
          call_duration: 40,
          talk_duration: 28,
          status: 'ANSWERED',
          type: 'Inbound',
        },
      }),
    });
    expect(posted.status).toBe(202);
    await eventually(() =>
      Promise.resolve(alpha.calls().find((call) => call.EXTERNAL_CALL_ID === callId && call.finished)),
    );
    // Shown once: on the next page the token is nowhere, and it is listed by its label only.
    await steps.press('#all-settings');
    expect(await frame.textContent('#tokens')).toContain('yeastar (setup)');
    expect(await frame.content()).not.toContain(token);
  });

  it('another PBX: the JSON API address and header, with a new token; a post with it is delivered', async () => {
    const { frame } = await open();
    const steps = new SetupSteps(pages.page, frame, 'other');
    await steps.press('#setup-link');
    await steps.press('#system-other');
    await steps.press('#setup-token');
    const pasted = (await frame.textContent('#paste-url')) ?? '';
    expect(pasted).toContain(`POST ${pages.bridge.url}/v1/calls/events`);
    const token = /Authorization: Bearer (\S+)/.exec(pasted)?.[1] ?? '';
    expect(token).toMatch(/^pbx_/);
    const callId = `setup-other-${Date.now()}`;
    const posted = await pages.bridge.http
      .post('/v1/calls/events')
      .set('Authorization', `Bearer ${token}`)
      .send([started(callId), ended(callId)]);
    expect(posted.status).toBe(202);
    await eventually(() =>
      Promise.resolve(alpha.calls().find((call) => call.EXTERNAL_CALL_ID === callId && call.finished)),
    );
    await steps.press('#setup-next');
    expect(await frame.textContent('#setup-step')).toBe('Step 4 of 5');
  });
});
