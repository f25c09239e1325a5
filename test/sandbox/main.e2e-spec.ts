import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { request } from './http';

/** Starts `sandbox/main.ts` as `npm run sandbox` would (without the build) and reads what it prints. */
function startSandboxProcess(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; printed: Record<string, string> }> {
  const root = join(__dirname, '..', '..');
  const child = spawn(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', join(root, 'sandbox', 'main.ts')],
    {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`sandbox did not start: ${output}`)), 30000);
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (!output.includes('Control API:')) return;
      clearTimeout(timer);
      const printed = Object.fromEntries(
        output
          .trim()
          .split('\n')
          .map((line) => line.split(/:\s+/, 2).map((part) => part.trim())),
      );
      resolve({ child, printed });
    });
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`sandbox exited with ${code}: ${output}`));
    });
  });
}

describe('npm run sandbox', () => {
  let child: ChildProcess | undefined;

  afterEach(async () => {
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child?.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  });

  it('prints its webhook URL and OAuth credentials, and registers a call for an unknown number with a new lead', async () => {
    const started = await startSandboxProcess({
      SANDBOX_PORT: '0',
      SANDBOX_RATE_BURST: '80',
      SANDBOX_TOKEN_TTL_SEC: '120',
    });
    child = started.child;
    const { printed } = started;
    expect(printed['Webhook URL']).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/rest\/1\/sandbox0webhook0code\/$/);
    expect(printed['OAuth client id']).toMatch(/^local\./);
    expect(printed['OAuth client secret']).toEqual(expect.any(String));
    const register = await request(
      `${printed['Webhook URL']}telephony.externalcall.register.json?USER_PHONE_INNER=100&PHONE_NUMBER=%2B4930999888&TYPE=2&CRM_CREATE=1&CALL_START_DATE=2026-11-22T10:00:00%2B01:00`,
    );
    expect(register.status).toBe(200);
    expect(register.body.result.CALL_ID).toMatch(/^externalCall\./);
    expect(register.body.result.CRM_CREATED_LEAD).toEqual(expect.any(Number));
    const leads = await request(`${printed['Sandbox portal']}/_sandbox/leads`);
    expect(leads.body).toContainEqual(
      expect.objectContaining({
        ID: String(register.body.result.CRM_CREATED_LEAD),
        TITLE: 'Call from +4930999888',
      }),
    );
    expect((await request(`${printed['Sandbox portal']}/_sandbox/budget`)).body).toMatchObject({
      burst: 80,
      ratePerSecond: 2,
    });
  });

  it('starts SANDBOX_PORTALS tenant portals beside the root portal', async () => {
    const started = await startSandboxProcess({ SANDBOX_PORT: '0', SANDBOX_PORTALS: '3' });
    child = started.child;
    const root = started.printed['Sandbox portal'];
    expect(started.printed['Tenant portals']).toMatch(/^3 /);
    const listed = (await request(`${root}/_sandbox/portals`)).body;
    expect(listed).toHaveLength(3);
    const [first] = listed;
    expect(first.restUrl).toBe(`${root}/p/${first.memberId}/rest/`);
    const tokens = await request(
      `${first.url}/_sandbox/apps/${encodeURIComponent(started.printed['OAuth client id'])}/tokens`,
      { json: {} },
    );
    const info = await request(`${first.restUrl}app.info?auth=${tokens.body.access_token}`);
    expect(info.body.result).toMatchObject({ member_id: first.memberId, DOMAIN: first.domain });
  });

  it('stops with a message naming a bad setting', async () => {
    await expect(startSandboxProcess({ SANDBOX_PORT: '0', SANDBOX_RATE_LIMIT_RPS: 'fast' })).rejects.toThrow(
      /SANDBOX_RATE_LIMIT_RPS must be a positive number, got "fast"/,
    );
  });
});
