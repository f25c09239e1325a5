import { createConnection } from 'mysql2/promise';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SandboxPortal } from '../../sandbox';
import { AmiDouble } from '../support/ami-double';
import { eventually, testEnv } from '../support/bridge-harness';
import { BridgeProcess, freePort, startBridgeProcess } from '../support/bridge-process';
import { CdrDatabase, CdrWriter } from '../support/cdr-database';
import { EslDouble } from '../support/esl-double';
import { callsByExternalId } from '../support/sandbox-inspect';

/**
 * AMI_URL, ESL_URL and ASTERISK_CDR_URL with the passwords real PBX admins generate (`/`, `#`, `?`, `@`),
 * pasted as they are, not percent-encoded. Before, `new URL` read such a password as a path or a fragment:
 * the bridge (dist/main.js, a real child process here) crashed at start-up with a stack trace. Now it
 * starts, logs in with exactly that secret (each double checks it) and follows a call to the sandbox
 * portal; a malformed URL stops start-up with one line naming the variable, never the password.
 */
jest.setTimeout(120_000);

/** What PBX admins paste: every character `new URL` splits a URL on. */
const SECRET = 'Ab/cd#e?f@g';

/** The bridge started with `env` and expected to refuse it: its exit code and every line it wrote. */
async function refusedStart(env: Record<string, string>): Promise<{ code: number | null; lines: string[] }> {
  const child = spawn(process.execPath, [join(__dirname, '..', '..', 'dist', 'main.js')], {
    cwd: tmpdir(),
    env: { PATH: process.env.PATH ?? '', ...env, PORT: String(await freePort()) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, lines: output.split('\n').filter((line) => line.trim() !== '') };
}

describe('credential URLs with any character in the password (a real bridge process)', () => {
  let sandbox: SandboxPortal;
  let dir: string;
  let bridge: BridgeProcess | undefined;

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
  });
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bridge-credential-urls-'));
  });
  afterEach(async () => {
    if (bridge) {
      bridge.child.kill('SIGTERM');
      await bridge.exited;
      bridge = undefined;
    }
    rmSync(dir, { recursive: true, force: true });
  });
  afterAll(async () => {
    await sandbox.close();
  });

  const pbxFollow = async (url: string) => {
    const body = (await (await fetch(`${url}/health/ready`)).json()) as {
      details?: { pbxFollow?: { connected?: boolean; ledger?: { connected?: boolean } } };
    };
    return body.details?.pbxFollow;
  };
  const finishedOnce = (callId: string) =>
    eventually(async () => {
      const calls = await callsByExternalId(sandbox, callId);
      return calls.length === 1 && calls[0].finished ? calls[0] : undefined;
    }, 60_000);

  it('PBX_EVENTS=ami: logs in to AMI with that secret and follows a call; a malformed AMI_URL is one line', async () => {
    const pbx = await AmiDouble.start('crm-bridge', SECRET);
    try {
      const url = `tcp://crm-bridge:${SECRET}@127.0.0.1:${pbx.port}`;
      bridge = await startBridgeProcess(testEnv(sandbox, dir, { PBX_EVENTS: 'ami', AMI_URL: url }));
      const running = bridge;
      await eventually(async () => ((await pbxFollow(running.url))?.connected ? true : undefined), 30_000);
      // The double accepts only this user and exactly this secret.
      expect(pbx.actions.find((action) => action.Action === 'Login')).toMatchObject({
        Username: 'crm-bridge',
        Secret: SECRET,
      });
      const call = pbx.play({
        kind: 'inbound',
        from: '+4915144400001',
        to: '101',
        answeredBy: '101',
        talk: 9,
      });
      await call.done;
      expect((await finishedOnce(call.linkedid)).finished).toMatchObject({ DURATION: 9 });
      expect(JSON.stringify(await pbxFollow(running.url))).not.toContain(SECRET);
      expect(running.output()).not.toContain(SECRET);
    } finally {
      await pbx.close();
    }

    const refused = await refusedStart(
      testEnv(sandbox, dir, { PBX_EVENTS: 'ami', AMI_URL: `tcp://crm-bridge:${SECRET}@127.0.0.1:99999` }),
    );
    expect(refused.code).toBe(1);
    expect(refused.lines).toEqual([
      'Invalid configuration: AMI_URL: must be tcp://user:secret@host:5038 or tls://user:secret@host:5039 (this one has a port outside 1-65535)',
    ]);
  });

  it('PBX_EVENTS=esl: authenticates to the event socket with that password and follows a call; a malformed ESL_URL is one line', async () => {
    const pbx = await EslDouble.start(SECRET);
    try {
      const url = `tcp://:${SECRET}@127.0.0.1:${pbx.port}`;
      bridge = await startBridgeProcess(testEnv(sandbox, dir, { PBX_EVENTS: 'esl', ESL_URL: url }));
      const running = bridge;
      await eventually(async () => ((await pbxFollow(running.url))?.connected ? true : undefined), 30_000);
      expect(pbx.commands[0]).toBe(`auth ${SECRET}`);
      const call = pbx.play({
        kind: 'inbound',
        from: '+4915144400002',
        to: '101',
        answeredBy: '101',
        talk: 7,
      });
      await call.done;
      expect((await finishedOnce(call.callId)).finished).toMatchObject({ DURATION: 7 });
      expect(running.output()).not.toContain(SECRET);
    } finally {
      await pbx.close();
    }

    const refused = await refusedStart(
      testEnv(sandbox, dir, { PBX_EVENTS: 'esl', ESL_URL: `tcp://:${SECRET}@127.0.0.1:99999` }),
    );
    expect(refused.code).toBe(1);
    expect(refused.lines).toEqual([
      'Invalid configuration: ESL_URL: must be tcp://:password@host:8021 or tls://:password@host:8021 (this one has a port outside 1-65535)',
    ]);
  });

  it('ASTERISK_CDR_URL: reads the real MariaDB ledger as a user with that password; a malformed URL is one line', async () => {
    const pbx = await AmiDouble.start();
    const cdr = await CdrDatabase.create('credential_urls');
    const user = new URL(cdr.url).username;
    // The reader's password becomes one with `/`, `#`, `?` and `@` (as the FreePBX admin generated it).
    const root = await createConnection({
      user: 'root',
      socketPath: process.env.MARIADB_SOCKET ?? '/run/mysqld/mysqld.sock',
    });
    await root.query(`ALTER USER ?@'127.0.0.1' IDENTIFIED BY ?`, [user, SECRET]);
    await root.end();
    const writer = new CdrWriter(cdr, pbx);
    try {
      const url = `mysql://${user}:${SECRET}@127.0.0.1:3306/${cdr.name}`;
      bridge = await startBridgeProcess(testEnv(sandbox, dir, { ASTERISK_CDR_URL: url }));
      const running = bridge;
      await eventually(
        async () => ((await pbxFollow(running.url))?.ledger?.connected ? true : undefined),
        30_000,
      );
      // Not followed over AMI: the call reaches the portal from its CDR rows only.
      const call = pbx.play({
        kind: 'inbound',
        from: '+4915144400003',
        to: '101',
        answeredBy: '101',
        talk: 11,
      });
      await call.done;
      await writer.flushed();
      expect((await finishedOnce(call.linkedid)).finished).toMatchObject({ DURATION: 11 });
      expect(running.output()).not.toContain(SECRET);
    } finally {
      await pbx.close();
      await cdr.close();
    }

    const refused = await refusedStart(
      testEnv(sandbox, dir, { ASTERISK_CDR_URL: `mysql://cdr:${SECRET}@127.0.0.1:99999/asteriskcdrdb` }),
    );
    expect(refused.code).toBe(1);
    expect(refused.lines).toEqual([
      'Invalid configuration: ASTERISK_CDR_URL: must be mysql://user:password@host:3306/asteriskcdrdb (mysqls:// or ?ssl=true for TLS) (this one has a port outside 1-65535)',
    ]);
  });
});
