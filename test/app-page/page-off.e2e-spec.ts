import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxPortal } from '../../sandbox';
import { eventually, testEnv } from '../support/bridge-harness';
import { BridgeProcess, startBridgeProcess } from '../support/bridge-process';

/**
 * Webhook mode without ADMIN_TOKEN, through the built bridge as a child process (its own log captured): the
 * page answers a plain page in the user's language saying what to set and where (403, never a 5xx), the
 * start-up log says once how to turn the page on, and no request leaves a stack trace in the log.
 */
describe('the page without ADMIN_TOKEN (webhook mode)', () => {
  let sandbox: SandboxPortal;
  let dir: string;
  let bridge: BridgeProcess;

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    dir = mkdtempSync(join(tmpdir(), 'bridge-page-off-'));
    bridge = await startBridgeProcess(testEnv(sandbox, dir, { ADMIN_TOKEN: '', LOG_LEVEL: 'log' }));
  }, 60_000);

  afterAll(async () => {
    bridge?.child.kill('SIGTERM');
    await bridge?.exited;
    await sandbox?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a plain page naming ADMIN_TOKEN in the user language, logs one warning and no stack', async () => {
    const english = await fetch(`${bridge.url}/app?LANG=en`);
    expect(english.status).toBe(403);
    const page = await english.text();
    expect(page).toContain('This page is not switched on yet');
    expect(page).toContain('Set ADMIN_TOKEN');
    expect(page).toContain('.env file');
    expect(page).toContain('class="prompt"');
    expect(page).not.toContain('role="alert"');

    const german = await fetch(`${bridge.url}/app?LANG=de`, { method: 'POST' });
    expect(german.status).toBe(403);
    expect(await german.text()).toContain('Setzen Sie ADMIN_TOKEN');
    // A form post of the page (no session could have been issued) gets the same page.
    const view = await fetch(`${bridge.url}/app/view?LANG=ru`, { method: 'POST' });
    expect(view.status).toBe(403);
    expect(await view.text()).toContain('Задайте ADMIN_TOKEN');

    // The request log has written the last request's line: everything before it is in the output too.
    await eventually(async () => (/"url":"\/app\/view\?LANG=ru"/.test(bridge.output()) ? true : undefined));
    const log = bridge.output();
    expect(log).not.toMatch(/"stack"|\n\s+at /);
    expect(log).not.toContain('request errored');
    const warnings = log.split('\n').filter((line) => line.includes("the application's page (/app) is off"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('set ADMIN_TOKEN');
  });
});
