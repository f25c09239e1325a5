import { randomBytes } from 'node:crypto';
import { createServer, IncomingMessage, request as httpRequest, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { SandboxPortal, SandboxTenant } from '../../sandbox';
import { ADMIN_TOKEN, eventually } from '../support/bridge-harness';
import { FormAnswer, postFrom } from '../support/post-from';
import { install, MultiBridge, startMultiBridge, tempDir } from '../support/multi-harness';

/**
 * The vendor's OAuth server as the bridge reaches it: a real HTTP hop in front of the sandbox's, counting
 * every token request (each one spends the application's client secret) and, when asked, answering slowly.
 */
class CountingOAuthServer {
  tokenRequests = 0;
  delayMs = 0;
  private server?: Server;
  url = '';

  constructor(private readonly upstream: string) {}

  async start(): Promise<void> {
    this.server = createServer((request, response) => void this.forward(request, response));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  private async forward(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    if ((request.url ?? '').startsWith('/oauth/token')) {
      this.tokenRequests += 1;
      if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    }
    const target = new URL(request.url ?? '/', this.upstream);
    const onward = httpRequest(
      target,
      { method: request.method, headers: { ...request.headers, host: target.host }, agent: false },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    onward.on('error', () => response.destroy());
    onward.end(Buffer.concat(chunks));
  }
}

/** A well-formed install post for `tenant` with tokens nobody issued. */
function junkInstall(tenant: SandboxTenant, fields: Record<string, string> = {}) {
  return {
    event: 'ONAPPINSTALL',
    auth: {
      access_token: randomBytes(35).toString('hex'),
      refresh_token: randomBytes(35).toString('hex'),
      member_id: tenant.memberId,
      domain: tenant.domain,
      client_endpoint: tenant.restUrl,
      application_token: randomBytes(16).toString('hex'),
      ...fields,
    },
  };
}

/**
 * Issue 26 finding 16 and issue 36 finding 1, through HTTP with many portals: cheap checks come before any
 * request to the vendor's OAuth server; installs are queued and deduplicated, never refused for their rate
 * (the vendor posts every portal's install from a few addresses and does not retry); forgeries cost their
 * source, so a flood of them spends only a handful of token requests.
 */
describe('install posts: queued, never refused for rate; forgeries cost their source', () => {
  let sandbox: SandboxPortal;
  let oauth: CountingOAuthServer;
  let bridge: MultiBridge;
  let temp: ReturnType<typeof tempDir>;
  let tenant: SandboxTenant;
  let other: SandboxTenant;
  /** Twenty portals of the published application, installing at once. */
  let many: SandboxTenant[];

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    tenant = sandbox.addPortal({ name: 'real' });
    other = sandbox.addPortal({ name: 'target' });
    many = Array.from({ length: 20 }, (_, i) => sandbox.addPortal({ name: `shop${i}` }));
    oauth = new CountingOAuthServer(sandbox.url);
    await oauth.start();
    temp = tempDir();
    bridge = await startMultiBridge(sandbox, temp.dir, {
      B24_OAUTH_URL: oauth.url,
      B24_ALLOWED_DOMAINS: [tenant, other, ...many].map((portal) => portal.domain).join(','),
    });
  });

  afterAll(async () => {
    await bridge?.close();
    await oauth?.close();
    await sandbox?.close();
    temp?.remove();
  });

  it('20 installs posted at once from one address are all taken: every portal installed', async () => {
    oauth.tokenRequests = 0;
    // The sandbox posts every portal's install from 127.0.0.1, as the vendor's servers post from a few.
    const statuses = await Promise.all(many.map((portal) => install(portal, bridge.url)));
    expect(statuses).toEqual(many.map(() => 200));
    const listed = await bridge.http.get('/v1/admin/portals').set('Authorization', `Bearer ${ADMIN_TOKEN}`);
    const active = new Set(
      (listed.body.portals as { portalId: string; status: string }[])
        .filter((portal) => portal.status === 'active')
        .map((portal) => portal.portalId),
    );
    for (const portal of many) expect(active.has(portal.memberId)).toBe(true);
    // One check each: no post was checked twice.
    expect(oauth.tokenRequests).toBe(20);
  });

  it('junk that cheap checks catch never reaches the OAuth server, nor does a replay of refused tokens', async () => {
    oauth.tokenRequests = 0;
    const post = (source: string, form: Record<string, unknown>) =>
      postFrom(source, `${bridge.url}/oauth/install`, form).then((answer) => answer.status);
    // Malformed fields, a member_id that cannot be a portal id, a domain outside B24_ALLOWED_DOMAINS.
    expect(await post('127.0.0.21', junkInstall(other, { access_token: 'not a token <x>' }))).toBe(400);
    expect(await post('127.0.0.22', junkInstall(other, { member_id: 'abc~def' }))).toBe(400);
    expect(await post('127.0.0.23', junkInstall(other, { domain: 'evil.example.com' }))).toBe(403);
    expect(oauth.tokenRequests).toBe(0);

    // Well-formed junk is asked about once; its replays, from any address, are answered without asking.
    const junk = junkInstall(other);
    expect(await post('127.0.0.24', junk)).toBe(403);
    expect(oauth.tokenRequests).toBe(1);
    for (let i = 0; i < 10; i++) expect(await post(`127.0.0.${30 + i}`, junk)).toBe(403);
    expect(oauth.tokenRequests).toBe(1);

    // The real portal repeating its install (its refresh token already spent) is still answered.
    expect(await install(tenant, bridge.url)).toBe(200);
  });
  it('200 forgeries at 20/s from one address cost a handful of token requests; none is a 429', async () => {
    oauth.tokenRequests = 0;
    const repeated = junkInstall(other);
    const answers: Promise<FormAnswer>[] = [];
    for (let i = 0; i < 200; i += 1) {
      // Various forged member_ids of well-formed junk, the same forgery again and again, another portal's id.
      const form =
        i % 4 === 0
          ? repeated
          : i % 4 === 1
            ? junkInstall(other)
            : junkInstall(other, { member_id: randomBytes(16).toString('hex') });
      answers.push(postFrom('127.0.0.8', `${bridge.url}/oauth/install`, form));
      // Load shaping, not a wait: 20 posts a second, the rate the per-address credit is measured against.
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const settled = await Promise.all(answers);
    const statuses = settled.map((answer) => answer.status);
    expect(statuses.filter((status) => status !== 403 && status !== 503)).toEqual([]);
    // Past the address's credit of failed checks it is answered 503 with when to post again, unchecked.
    expect(settled.filter((answer) => answer.status === 503).every((a) => Number(a.retryAfter) > 0)).toBe(
      true,
    );
    expect(oauth.tokenRequests).toBeLessThanOrEqual(5);
    // The vendor's address (its installs confirmed) still installs a portal at once.
    expect(await install(tenant, bridge.url)).toBe(200);
  });

  it('a junk flood from one address against a slow OAuth server leaves a real install through', async () => {
    oauth.delayMs = 1500;
    oauth.tokenRequests = 0;
    let answered = 0;
    const flood = Array.from({ length: 40 }, () =>
      postFrom('127.0.0.7', `${bridge.url}/oauth/install`, junkInstall(other)).then((answer) => {
        answered += 1;
        return answer.status;
      }),
    );
    // The flood has reached the bridge (a check held at the OAuth server, or a post answered unchecked)
    // when the real portal installs.
    await eventually(async () => (oauth.tokenRequests > 0 || answered > 0 ? true : undefined));
    expect(await install(tenant, bridge.url)).toBe(200);
    const statuses = await Promise.all(flood);
    expect(statuses.filter((status) => status !== 403 && status !== 503)).toEqual([]);
    expect(statuses.filter((status) => status === 503).length).toBeGreaterThan(30);
    // The strangers' credit of failed checks, and the real install's own.
    expect(oauth.tokenRequests).toBeLessThanOrEqual(5);
    oauth.delayMs = 0;
  });
});
