import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SandboxPortal } from '../../sandbox';
import { eventually, testEnv } from '../support/bridge-harness';
import { BridgeProcess, startBridgeProcess } from '../support/bridge-process';

const root = resolve(__dirname, '../..');
const scripts = (
  JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
).scripts;
/** npm's progress spinner frames (braille) and the terminal codes it clears them with. */
const SPINNER = new RegExp(`[\u2800-\u28ff]|${String.fromCharCode(27)}\\[`);

/**
 * What an operator sees in the first minutes: `npm start`'s first line, the bridge's first log line, and the
 * browser's icon request, which must neither 404 nor fill the request log.
 */
describe('the first hour: start-up output and the icon', () => {
  let sandbox: SandboxPortal;
  let dir: string;
  let bridge: BridgeProcess;

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    dir = mkdtempSync(join(tmpdir(), 'bridge-first-hour-'));
    bridge = await startBridgeProcess(testEnv(sandbox, dir, { LOG_LEVEL: 'info', LOG_FORMAT: 'json' }));
  });
  afterAll(async () => {
    bridge.child.kill('SIGKILL');
    await bridge.exited;
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const logLines = () =>
    bridge
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg: string; level: number; req?: { url?: string } });

  it('says in words which portal this replica delivers, the lease ids last', async () => {
    const line = await eventually(async () =>
      logLines().find((entry) => entry.msg.includes('from this replica')),
    );
    expect(line.msg).toMatch(
      /^delivering portal sandbox's calls from this replica \(lease epoch \d+, replica [^\s)]+\)$/,
    );
  });

  it('answers /favicon.ico with a cached icon and leaves it out of the request log', async () => {
    const icon = await fetch(`${bridge.url}/favicon.ico`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toBe('image/x-icon');
    expect(icon.headers.get('cache-control')).toMatch(/max-age=\d{4,}/);
    const body = Buffer.from(await icon.arrayBuffer());
    // An ICO header (reserved 0, type 1, one image) around a PNG.
    expect([...body.subarray(0, 6)]).toEqual([0, 0, 1, 0, 1, 0]);
    expect(body.subarray(22, 26).toString('latin1')).toBe('\u0089PNG');
    // A request after the icon's: once its line is written, the icon's would have been too.
    await fetch(`${bridge.url}/after-the-icon`);
    await eventually(async () => logLines().find((entry) => entry.req?.url === '/after-the-icon'));
    expect(logLines().filter((entry) => JSON.stringify(entry).includes('favicon'))).toEqual([]);
  });

  it('still refuses other methods on /favicon.ico as an unknown route', async () => {
    const response = await fetch(`${bridge.url}/favicon.ico`, { method: 'POST' });
    expect(response.status).toBe(404);
  });

  it("npm start's build step draws no spinner in front of the bridge's first line on a terminal", () => {
    // The project's own start script, run by npm on a pseudo-terminal (script(1)), with a build that takes a
    // moment and a dist/main.js that prints one line: what the nested `npm run build` leaves in front of it.
    const project = mkdtempSync(join(tmpdir(), 'bridge-npm-start-'));
    try {
      mkdirSync(join(project, 'dist'));
      writeFileSync(join(project, 'dist', 'main.js'), "console.log('FIRST LOG LINE');\n");
      const build = 'node -e "setTimeout(() => {}, 800)"';
      writeFileSync(
        join(project, 'package.json'),
        JSON.stringify({ name: 'start-check', version: '1.0.0', scripts: { build, start: scripts.start } }),
      );
      const run = spawnSync('script', ['-qfec', 'npm start', '/dev/null'], {
        cwd: project,
        encoding: 'utf8',
        env: { PATH: process.env.PATH ?? '', HOME: project, TERM: 'xterm' },
        timeout: 30000,
      });
      expect(run.status).toBe(0);
      const first = run.stdout.split(/\r?\n/).find((line) => line.includes('FIRST LOG LINE'));
      expect(first).toBeDefined();
      expect(SPINNER.test(first!)).toBe(false);
      expect(first).toBe('FIRST LOG LINE');
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });
});
