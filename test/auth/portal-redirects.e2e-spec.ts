import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { SandboxPortal } from '../../sandbox';
import { callBodies, eventually, Harness, PBX_TOKEN, startHarness } from '../support/bridge-harness';

/** A plain HTTP server on 127.0.0.1 that records what reaches it and answers with `answer`. */
async function startServer(
  answer: (request: IncomingMessage) => { status: number; body: string },
): Promise<{ server: Server; port: number; seen: string[] }> {
  const seen: string[] = [];
  const server = createServer((request, response) => {
    seen.push(request.url ?? '');
    request.resume();
    request.on('end', () => {
      const { status, body } = answer(request);
      response.writeHead(status, { 'Content-Type': 'application/json' });
      response.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, seen };
}

const closeServer = (server: Server) => new Promise((resolve) => server.close(resolve));

async function postCalls(harness: Harness, prefix: string, count: number): Promise<void> {
  for (const body of callBodies(prefix, count)) {
    const response = await harness.http
      .post('/v1/calls/events')
      .set('Authorization', `Bearer ${PBX_TOKEN}`)
      .send(body);
    expect(response.status).toBe(202);
  }
}

async function portalHealth(harness: Harness): Promise<Record<string, unknown>> {
  return (await harness.http.get('/health/ready')).body.details.portal;
}

describe('Portal redirects and answer sizes', () => {
  let sandbox: SandboxPortal;
  const opened: { close(): Promise<unknown> }[] = [];

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
  });
  afterAll(() => sandbox.close());
  beforeEach(() => sandbox.reset());
  afterEach(async () => {
    for (const thing of opened.splice(0).reverse()) await thing.close();
  });

  it('does not follow a move to another site: delivery pauses with the reason, the code never leaves', async () => {
    // `localhost` is another host than the portal's 127.0.0.1, as evil.example.com is for a real portal.
    const elsewhere = await startServer(() => ({ status: 200, body: '{"result":{}}' }));
    opened.push({ close: () => closeServer(elsewhere.server) });
    // Every request is redirected, from the employee directory's first one on.
    sandbox.injectFault({ kind: 'redirect', location: `http://localhost:${elsewhere.port}` });
    const harness = await startHarness({}, {}, { sandbox });
    opened.push(harness);

    await postCalls(harness, 'moved-away', 3);
    const portal = await eventually(async () => {
      const details = await portalHealth(harness);
      return details.paused ? details : undefined;
    });
    const reason = String(portal.pausedReason);
    expect(reason).toContain('REDIRECT_REFUSED');
    expect(reason).toContain(`127.0.0.1:${new URL(sandbox.url).port}`);
    expect(reason).toContain(`localhost:${elsewhere.port}`);
    expect(reason).not.toContain(new URL(sandbox.webhookUrl).pathname);
    expect(portal).toMatchObject({ failedCalls: 0, queueDepth: 3 });
    expect(elsewhere.seen).toEqual([]);
    expect(sandbox.calls()).toHaveLength(0);
  });

  it('follows a move to a host B24_ALLOWED_DOMAINS names, and keeps calling it', async () => {
    const movedTo = await SandboxPortal.start();
    opened.push(movedTo);
    // The first request (the employee directory's) learns of the move before any call is delivered.
    sandbox.injectFault({
      kind: 'redirect',
      location: `http://localhost:${new URL(movedTo.url).port}`,
      times: 1,
    });
    const harness = await startHarness({ B24_ALLOWED_DOMAINS: 'localhost' }, {}, { sandbox });
    opened.push(harness);
    await eventually(async () => (movedTo.requests().length > 0 ? true : undefined));

    await postCalls(harness, 'moved-allowed', 3);
    await eventually(async () => {
      const mine = movedTo.calls().filter((call) => call.EXTERNAL_CALL_ID?.startsWith('moved-allowed-'));
      return mine.length === 3 && mine.every((call) => call.finished) ? mine : undefined;
    });
    expect(sandbox.calls()).toHaveLength(0);
    expect(await portalHealth(harness)).toMatchObject({ paused: false, failedCalls: 0 });
  });

  it('follows a move to another port of the same host, and keeps calling it', async () => {
    const movedTo = await SandboxPortal.start();
    opened.push(movedTo);
    sandbox.injectFault({ kind: 'redirect', location: movedTo.url, times: 1 });
    const harness = await startHarness({}, {}, { sandbox });
    opened.push(harness);
    await eventually(async () => (movedTo.requests().length > 0 ? true : undefined));

    await postCalls(harness, 'moved-port', 2);
    await eventually(async () => {
      const mine = movedTo.calls().filter((call) => call.EXTERNAL_CALL_ID?.startsWith('moved-port-'));
      return mine.length === 2 && mine.every((call) => call.finished) ? mine : undefined;
    });
    expect(sandbox.calls()).toHaveLength(0);
  });

  it('stops reading an answer past 16 MB: the calls stay queued with the reason', async () => {
    const padding = 'x'.repeat(17 * 1024 * 1024);
    const huge = await startServer(() => ({
      status: 200,
      body: `{"result":{"result":[],"result_error":[]},"padding":"${padding}"}`,
    }));
    opened.push({ close: () => closeServer(huge.server) });
    const harness = await startHarness(
      { B24_WEBHOOK_URL: `http://127.0.0.1:${huge.port}/rest/1/abcdefgh12345678/` },
      {},
      { sandbox },
    );
    opened.push(harness);

    await postCalls(harness, 'huge', 1);
    const call = await eventually(async () => {
      const view = (await harness.http.get('/v1/calls/huge-0').set('Authorization', `Bearer ${PBX_TOKEN}`))
        .body as { state: string; lastError: string | null };
      return view.lastError ? view : undefined;
    });
    expect(call.state).toBe('queued');
    expect(call.lastError).toContain('exceeded 16777216 bytes');
  });
});
