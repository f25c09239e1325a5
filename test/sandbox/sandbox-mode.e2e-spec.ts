import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunningSandbox, startSandboxPortal } from '../../src/sandbox-mode';
import { request } from './http';

type SandboxMode = typeof import('../../src/sandbox-mode');

/** dist/sandbox-mode.js as `node dist/main.js` loads it (`npm run build` made it). */
const built = join(__dirname, '..', '..', 'dist', 'sandbox-mode.js');

/** The running sandbox answers as the portal does on the webhook the bridge is handed, then stops. */
async function expectServingUntilClosed(sandbox: RunningSandbox): Promise<void> {
  expect(sandbox.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(sandbox.webhookUrl).toBe(`${sandbox.url}/rest/1/sandbox0webhook0code/`);
  const profile = await request(`${sandbox.webhookUrl}profile`);
  expect(profile.status).toBe(200);
  expect(profile.body.result).toMatchObject({ ID: '1', ADMIN: true });
  await sandbox.close();
  await expect(request(`${sandbox.webhookUrl}profile`)).rejects.toThrow();
}

describe('sandbox mode: the bridge loads the sandbox portal at run time', () => {
  it('starts it from the TypeScript sources in sandbox/ (ts-node, Jest)', async () => {
    await expectServingUntilClosed(await startSandboxPortal(0));
  });

  it('starts it from the build, dist/sandbox/ beside dist/sandbox-mode.js', async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const mode = require(built) as SandboxMode;
    expect(mode.sandboxEntryPath()).toBe(join(__dirname, '..', '..', 'dist', 'sandbox'));
    await expectServingUntilClosed(await mode.startSandboxPortal(0));
  });

  it('says the sandbox is not built when dist/sandbox/ is missing', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'sandbox-mode-'));
    try {
      copyFileSync(built, join(folder, 'sandbox-mode.js'));
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const mode = require(join(folder, 'sandbox-mode.js')) as SandboxMode;
      await expect(mode.startSandboxPortal(0)).rejects.toThrow(
        `the sandbox portal is not built (${join(folder, 'sandbox')}): run npm run build`,
      );
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
