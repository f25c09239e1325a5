import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_TOKEN, eventually } from '../support/bridge-harness';
import { BridgeProcess, startBridgeProcess } from '../support/bridge-process';
import { testDatabaseUrl } from '../support/test-database';

const PBX_TOKEN = 'production-pbx-token-5c8e1f';
/** An https portal nobody listens on: nothing here needs the portal to answer. */
const PORTAL = 'https://127.0.0.1:9/rest/1/webhook0code/';

/** The built bridge (dist/main.js) started as operators start it, in production. */
describe('starting the bridge', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'bridge-production-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  const productionEnv = (env: Record<string, string> = {}): Record<string, string> => ({
    NODE_ENV: 'production',
    PBX_TOKENS: PBX_TOKEN,
    ADMIN_TOKEN,
    B24_WEBHOOK_URL: PORTAL,
    B24_DEFAULT_USER_ID: '1',
    DATABASE_URL: testDatabaseUrl(dir),
    ...env,
  });

  const exitMessage = async (env: Record<string, string>): Promise<string> => {
    const started = await startBridgeProcess(env).then(
      async (bridge) => {
        bridge.child.kill('SIGKILL');
        await bridge.exited;
        return undefined;
      },
      (error: Error) => error.message,
    );
    if (started === undefined) throw new Error('the bridge started');
    return started;
  };

  describe('in production with LOG_LEVEL=info', () => {
    let bridge: BridgeProcess;

    beforeAll(async () => {
      bridge = await startBridgeProcess(productionEnv({ LOG_LEVEL: 'info' }));
    });
    afterAll(async () => {
      bridge.child.kill('SIGTERM');
      await bridge.exited;
    });

    it('starts and writes info lines: one per request', async () => {
      const response = await fetch(`${bridge.url}/v1/calls/events`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${PBX_TOKEN}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({
          event: 'call.started',
          callId: 'info-level-1',
          direction: 'inbound',
          phoneNumber: '+4930555000222',
          extension: '101',
          at: '2026-11-22T10:00:00+01:00',
        }),
      });
      expect(response.status).toBe(202);
      const requestLine = () =>
        bridge
          .output()
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as { level: number; req?: { url?: string } })
          .find((entry) => entry.level === 30 && entry.req?.url === '/v1/calls/events');
      // pino-http writes the line as the request completes.
      expect(await eventually(async () => requestLine())).toBeDefined();
    });

    it('shows the API documentation only with the admin token', async () => {
      for (const path of ['/docs', '/docs/', '/DOCS', '/docs-json', '/docs-yaml']) {
        const refused = await fetch(`${bridge.url}${path}`);
        expect({ path, status: refused.status }).toEqual({ path, status: 401 });
        expect(refused.headers.get('www-authenticate')).toMatch(/^Basic /);
        expect(await refused.text()).toContain('ADMIN_TOKEN');
      }
      const basic = `Basic ${Buffer.from(`operator:${ADMIN_TOKEN}`).toString('base64')}`;
      const document = await fetch(`${bridge.url}/docs-json`, { headers: { Authorization: basic } });
      expect(document.status).toBe(200);
      expect((await document.json()).paths['/v1/calls/events']).toBeDefined();
      const ui = await fetch(`${bridge.url}/docs`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(ui.status).toBe(200);
      const pbx = await fetch(`${bridge.url}/docs-json`, {
        headers: { Authorization: `Bearer ${PBX_TOKEN}` },
      });
      expect(pbx.status).toBe(401);
    });
  });

  it('refuses SANDBOX=1 in production, naming SANDBOX', async () => {
    const message = await exitMessage(productionEnv({ SANDBOX: '1', B24_WEBHOOK_URL: '' }));
    expect(message).toMatch(/SANDBOX: the sandbox portal is a fake and cannot run with NODE_ENV=production/);
  });

  it('refuses SANDBOX=1 beside a configured portal, outside production too', async () => {
    const message = await exitMessage(productionEnv({ NODE_ENV: 'development', SANDBOX: '1' }));
    expect(message).toMatch(/SANDBOX: set either SANDBOX or a portal/);
  });

  it('refuses a plain-http portal and a PBX token under 16 characters in production', async () => {
    const message = await exitMessage(
      productionEnv({ B24_WEBHOOK_URL: PORTAL.replace('https:', 'http:'), PBX_TOKENS: 'short-pbx-token' }),
    );
    expect(message).toMatch(/B24_WEBHOOK_URL: must be an https:\/\/ URL in production/);
    expect(message).toMatch(/PBX_TOKENS: every token must be at least 16 characters/);
    expect(message).not.toContain('short-pbx-token');
  });

  it("refuses the repository's placeholder secrets in production, naming each variable", async () => {
    const message = await exitMessage(
      productionEnv({
        PBX_TOKENS: 'replace-with-a-long-random-pbx-token',
        ADMIN_TOKEN: 'replace-with-a-long-random-admin-token',
        B24_WEBHOOK_URL: 'https://portal.example.com/rest/1/replace-with-webhook-code/',
      }),
    );
    expect(message).toMatch(/PBX_TOKENS: still the repository's placeholder/);
    expect(message).toMatch(/ADMIN_TOKEN: still the repository's placeholder/);
    expect(message).toMatch(/B24_WEBHOOK_URL: still the repository's placeholder/);
  });
});
