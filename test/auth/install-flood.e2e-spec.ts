import { randomBytes } from 'node:crypto';
import { defaultSeed, SandboxPortal } from '../../sandbox';
import { callBodies } from '../support/bridge-harness';
import { FormAnswer as Answer, postFrom } from '../support/post-from';
import {
  installApp,
  OAuthBridge,
  postCalls,
  sleep,
  startOAuthBridge,
  tempDir,
  untilAllFinished,
} from '../auth/oauth-harness';

/** A valid-looking install post: the public portal domain, endpoint and member_id, tokens nobody issued. */
function forgedInstall(sandbox: SandboxPortal, fields: Record<string, string> = {}) {
  return {
    event: 'ONAPPINSTALL',
    auth: {
      access_token: randomBytes(35).toString('hex'),
      refresh_token: randomBytes(35).toString('hex'),
      member_id: defaultSeed().memberId,
      domain: new URL(sandbox.url).host,
      client_endpoint: `${sandbox.url}/rest/`,
      application_token: randomBytes(16).toString('hex'),
      ...fields,
    },
  };
}

describe('Install and event posts: limits before the portal budget', () => {
  let sandbox: SandboxPortal;
  let workspace: ReturnType<typeof tempDir>;
  let bridge: OAuthBridge;
  const appInfoCalls = (since = 0) =>
    sandbox.requests(since).filter((entry) => entry.method === 'app.info').length;

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
  });
  afterAll(() => sandbox.close());
  beforeEach(async () => {
    sandbox.reset();
    workspace = tempDir();
    bridge = await startOAuthBridge(sandbox, workspace.dir);
  });
  afterEach(async () => {
    await bridge.close();
    workspace.remove();
  });

  it('refuses malformed and inconsistent posts, and a repeat of the stored pair, without asking the portal', async () => {
    const install = `${bridge.url}/oauth/install`;
    const malformed = await postFrom(
      '127.0.0.1',
      install,
      forgedInstall(sandbox, { access_token: 'not a token <script>' }),
    );
    expect(malformed.status).toBe(400);
    expect(malformed.text).toContain('malformed auth[access_token]');

    const installed = await installApp(sandbox, bridge);
    expect(installed.status).toBe(200);
    const checksBefore = appInfoCalls();

    const otherMember = await postFrom(
      '127.0.0.2',
      install,
      forgedInstall(sandbox, { member_id: 'b'.repeat(32) }),
    );
    expect(otherMember.status).toBe(403);
    expect(otherMember.text).toContain('auth[member_id]');

    // The portal's own post once more (a retried delivery of it): nothing to check, nothing changes.
    const again = await postFrom('127.0.0.3', install, installed.posted);
    expect(again.status).toBe(200);
    expect(JSON.parse(again.text).message).toContain('already');
    expect(appInfoCalls()).toBe(checksBefore);
  });

  it('never refuses an install post for its rate; event posts are limited per source with 429', async () => {
    // Posts the bridge refuses by their own content (another portal's domain) cost nothing: all answered.
    const foreign = forgedInstall(sandbox, { domain: 'evil.example.com' });
    const answers: Answer[] = [];
    for (let i = 0; i < 8; i += 1) {
      answers.push(await postFrom('127.0.0.4', `${bridge.url}/oauth/install`, foreign));
    }
    expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(403));

    const event = { event: 'ONAPPUNINSTALL', auth: { application_token: 'forged' } };
    // All at once: the source's burst (60) plus its refill (10/s) over the time the posts take. 70 were
    // answered within the refill's second on a quiet machine but not at a load of 8; 200 meet the limit
    // unless answering them takes over 14 s.
    const events: Answer[] = await Promise.all(
      Array.from({ length: 200 }, () => postFrom('127.0.0.6', `${bridge.url}/oauth/events`, event)),
    );
    expect(events.filter((answer) => answer.status === 401).length).toBeGreaterThanOrEqual(60);
    expect(events.some((answer) => answer.status === 429 && Number(answer.retryAfter) > 0)).toBe(true);
  });

  it('delivers 200 calls under 20 forged installs per second for 10 s; the portal sees a handful of app.info', async () => {
    expect((await installApp(sandbox, bridge)).status).toBe(200);
    const legitimate = await bridge.storedTokens();
    const floodStartedAt = Date.now();

    const answers: Promise<Answer>[] = [];
    const flood = (async () => {
      for (let i = 0; i < 200; i += 1) {
        // Forty addresses, so the per-source limit alone would let many through.
        const source = `127.0.0.${10 + (i % 40)}`;
        answers.push(postFrom(source, `${bridge.url}/oauth/install`, forgedInstall(sandbox)));
        // Load shaping, not a wait: 20 forgeries a second for 10 s, the flood the title names.
        await sleep(50);
      }
    })();
    for (const body of callBodies('flooded', 200)) {
      await postCalls(bridge, body);
      // Load shaping: the calls arrive throughout the flood, not before it.
      await sleep(400);
    }
    await flood;
    const statuses = (await Promise.all(answers)).map((answer) => answer.status);
    await untilAllFinished(sandbox, 'flooded', 200);

    expect(appInfoCalls(floodStartedAt)).toBeLessThanOrEqual(5);
    expect(statuses).toHaveLength(200);
    // Forgeries past the strangers' credit of failed checks are answered 503 unchecked, never 429.
    expect(statuses.filter((status) => status !== 403 && status !== 503)).toEqual([]);
    expect(await bridge.storedTokens()).toEqual(legitimate);
  });
});
