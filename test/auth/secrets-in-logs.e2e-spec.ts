import axios from 'axios';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { stringify } from 'qs';
import { SandboxPortal } from '../../sandbox';
import { ADMIN_TOKEN, eventually, PBX_TOKEN, testEnv } from '../support/bridge-harness';
import { BridgeProcess, startBridgeProcess } from '../support/bridge-process';
import { callBodies } from '../support/bridge-harness';
import { oauthEnv, tempDir } from './oauth-harness';
import { untilAccessTokenExpired } from '../support/wait';

/**
 * Every OAuth secret the bridge handles during a run (client secret, application token, the code, every
 * access and refresh token it held) is looked for in the bridge process's whole output, at the most
 * verbose log level, and in what it answers the PBX and health probes. Needs `npx nest build` first.
 */
describe('OAuth secrets stay out of logs and answers', () => {
  let sandbox: SandboxPortal;
  let workspace: ReturnType<typeof tempDir>;
  let bridge: BridgeProcess;
  const secrets = new Set<string>();

  beforeAll(async () => {
    sandbox = await SandboxPortal.start({ accessTokenTtlSec: 2 });
    workspace = tempDir();
    bridge = await startBridgeProcess(
      testEnv(
        sandbox,
        workspace.dir,
        oauthEnv(sandbox, {
          PUBLIC_URL: 'http://bridge.example.test',
          // This test reads the stored tokens from the SQLite file; the store itself is tested elsewhere.
          DATABASE_URL: `sqlite:${join(workspace.dir, 'bridge.sqlite')}`,
          LOG_LEVEL: 'verbose',
          B24_BATCH_SIZE: '5',
        }),
      ),
    );
  });
  afterAll(async () => {
    if (bridge.child.exitCode === null) {
      bridge.child.kill('SIGTERM');
      await bridge.exited;
    }
    await sandbox.close();
    workspace.remove();
  });

  /** Every pair the bridge stores, sampled while it works (refreshes replace them every 2 s). */
  function sampleStoredTokens(): () => void {
    const db = new Database(join(workspace.dir, 'bridge.sqlite'), { readonly: true, fileMustExist: true });
    const read = db.prepare('SELECT access_token, refresh_token, application_token FROM portal_tokens');
    const sample = () => {
      for (const row of read.all() as Record<string, string | null>[]) {
        Object.values(row).forEach((value) => value && secrets.add(value));
      }
    };
    const timer = setInterval(sample, 100);
    return () => {
      clearInterval(timer);
      sample();
      db.close();
    };
  }

  /** The stored pair's expiry, read from the SQLite file as the samples are. */
  async function storedExpiry(): Promise<{ accessExpiresAt: number } | undefined> {
    const db = new Database(join(workspace.dir, 'bridge.sqlite'), { readonly: true, fileMustExist: true });
    try {
      const row = db.prepare('SELECT access_expires_at FROM portal_tokens').get() as
        { access_expires_at: number } | undefined;
      return row && { accessExpiresAt: Number(row.access_expires_at) };
    } finally {
      db.close();
    }
  }

  const post = (path: string, body: unknown) =>
    axios.post(`${bridge.url}${path}`, body, {
      headers: { Authorization: `Bearer ${PBX_TOKEN}` },
      validateStatus: () => true,
    });
  const postForm = (path: string, form: Record<string, unknown>) =>
    axios.post(`${bridge.url}${path}`, stringify(form), {
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      validateStatus: () => true,
    });

  it('never writes a secret to the log, the PBX or the health details', async () => {
    secrets.add(sandbox.oauthApp.clientSecret);
    const answers: unknown[] = [];

    // The install post, then deliveries across several token lifetimes.
    const { data: install } = await axios.post(
      `${sandbox.url}/_sandbox/apps/${encodeURIComponent(sandbox.oauthApp.clientId)}/install`,
      { handlerUrl: `${bridge.url}/oauth/install` },
    );
    expect(install.status).toBe(200);
    ['auth[access_token]', 'auth[refresh_token]', 'auth[application_token]'].forEach((field) =>
      secrets.add(install.posted[field]),
    );
    const stopSampling = sampleStoredTokens();
    for (const body of callBodies('secret', 30)) {
      expect((await post('/v1/calls/events', body)).status).toBe(202);
      await untilAccessTokenExpired(storedExpiry);
    }
    await eventually(async () => {
      const mine = sandbox.calls().filter((call) => call.EXTERNAL_CALL_ID?.startsWith('secret-'));
      return mine.length === 30 && mine.every((call) => call.finished) ? true : undefined;
    }, 60_000);

    // The code flow, its redirect_uri pointing at the public URL the browser would reach.
    const start = await axios.get(`${bridge.url}/oauth/start?token=${ADMIN_TOKEN}`, {
      maxRedirects: 0,
      validateStatus: () => true,
    });
    const cookie = (start.headers['set-cookie'] ?? []).map((set) => set.split(';', 1)[0]).join('; ');
    const authorize = await axios.get(start.headers.location, {
      maxRedirects: 0,
      validateStatus: () => true,
    });
    const callback = new URL(authorize.headers.location);
    secrets.add(callback.searchParams.get('code') ?? '');
    const done = await axios.get(`${bridge.url}/oauth/callback${callback.search}`, {
      headers: { Cookie: cookie },
      validateStatus: () => true,
    });
    expect(done.status).toBe(200);
    answers.push(done.data);
    // Reused state and code, a forged install and a forged event: refused, and said so in the log.
    answers.push(
      (
        await axios.get(`${bridge.url}/oauth/callback${callback.search}`, {
          headers: { Cookie: cookie },
          validateStatus: () => true,
        })
      ).data,
    );
    const forged = sandbox.issueTokens()!;
    secrets.add(forged.access_token);
    secrets.add(forged.refresh_token);
    const forgedInstall = await postForm('/oauth/install', {
      event: 'ONAPPINSTALL',
      auth: { ...forged, domain: 'evil.example.com', application_token: 'forged-application-token' },
    });
    expect(forgedInstall.status).toBe(403);
    answers.push(forgedInstall.data);
    const forgedEvent = await postForm('/oauth/events', {
      event: 'ONAPPUNINSTALL',
      auth: { application_token: forged.access_token },
    });
    expect(forgedEvent.status).toBe(401);
    answers.push(forgedEvent.data);

    // A revoked application: refused token, refused refresh, delivery paused.
    sandbox.revokeApp();
    expect((await post('/v1/calls/events', callBodies('revoked', 1)[0])).status).toBe(202);
    const health = await eventually(async () => {
      const { data } = await axios.get(`${bridge.url}/health/ready`);
      return data.details.portal.authorisation === 'needs-reauthorisation' ? data : undefined;
    });
    answers.push(health);
    answers.push(
      (
        await axios.get(`${bridge.url}/v1/calls/revoked-0`, {
          headers: { Authorization: `Bearer ${PBX_TOKEN}` },
        })
      ).data,
    );
    stopSampling();

    bridge.child.kill('SIGTERM');
    await bridge.exited;
    const output = bridge.output();
    expect(output).toContain('no longer accepted');
    expect(output).toContain('/oauth/callback');
    const everything = `${output}\n${JSON.stringify(answers)}`;
    expect(secrets.size).toBeGreaterThan(8);
    const leaked = [...secrets].filter((secret) => secret.length >= 8 && everything.includes(secret));
    expect(leaked).toEqual([]);
  });
});
