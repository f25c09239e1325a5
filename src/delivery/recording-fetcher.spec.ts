import { createServer, Server, ServerResponse } from 'node:http';
import { AddressInfo, BlockList } from 'node:net';
import { allowedNetworksOf, EgressPolicy } from '../common/egress';
import { RecordingHosts } from '../common/recording-hosts';
import { RecordingFetcher } from './recording-fetcher';

/** The fetcher against real local HTTP servers: statuses, refused connections, size caps, what it sends. */
describe('RecordingFetcher', () => {
  let server: Server;
  let base: string;
  let port: number;
  let handler: (res: ServerResponse, auth: string | undefined) => void;
  let bytesSent = 0;

  beforeAll(async () => {
    server = createServer((req, res) => handler(res, req.headers.authorization));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    base = `http://127.0.0.1:${port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const fetcher = (maxBytes = 1000) =>
    new RecordingFetcher({
      hosts: new RecordingHosts([`127.0.0.1:${port}`, '127.0.0.1:1']),
      authorization: 'Bearer rec-t0ken',
      maxBytes,
      timeoutMs: 2000,
      egress: EgressPolicy.unrestricted(),
    });
  const wav = (size: number) => Buffer.concat([Buffer.from('RIFF\0\0\0\0WAVE'), Buffer.alloc(size - 12, 7)]);

  it('sends the configured Authorization and names the file after the URL', async () => {
    let seen: string | undefined;
    handler = (res, auth) => {
      seen = auth;
      res.writeHead(200, { 'content-type': 'audio/wav' }).end(wav(100));
    };
    const outcome = await fetcher().fetch(`${base}/rec/a%20b.wav?token=x`);
    expect(outcome).toMatchObject({ kind: 'fetched', audio: 'wav', name: 'a b.wav' });
    expect(seen).toBe('Bearer rec-t0ken');
  });

  it('takes 404, 409, 425, 503 and a refused connection for "not there yet", other statuses as failures', async () => {
    for (const status of [404, 409, 425, 503]) {
      handler = (res) => res.writeHead(status).end();
      expect((await fetcher().fetch(`${base}/r.wav`)).kind).toBe('not-ready');
    }
    handler = (res) => res.writeHead(403).end();
    const forbidden = await fetcher().fetch(`${base}/r.wav?secret=s3`);
    expect(forbidden).toEqual({
      kind: 'failed',
      reason: `recording: 127.0.0.1:${port}/r.wav answered HTTP 403`,
    });
    expect(await fetcher().fetch('http://127.0.0.1:1/r.wav')).toMatchObject({
      kind: 'not-ready',
      reason: expect.stringContaining('ECONNREFUSED'),
    });
  });

  it('refuses a declared size over the cap without reading, and stops reading a stream past it', async () => {
    bytesSent = 0;
    handler = (res) =>
      res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': 5000 }).end(wav(5000));
    expect(await fetcher().fetch(`${base}/big.wav`)).toMatchObject({
      kind: 'failed',
      reason: expect.stringContaining('RECORDING_MAX_MB'),
    });
    handler = (res) => {
      res.writeHead(200, { 'content-type': 'audio/wav' });
      res.write(wav(600));
      bytesSent += 600;
      const timer = setInterval(() => {
        if (res.destroyed || !res.write(Buffer.alloc(600))) return clearInterval(timer);
        bytesSent += 600;
        if (bytesSent > 1_000_000) {
          clearInterval(timer);
          res.end();
        }
      }, 5);
    };
    expect(await fetcher().fetch(`${base}/stream.wav`)).toMatchObject({
      kind: 'failed',
      reason: expect.stringContaining('download stopped'),
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(bytesSent).toBeLessThan(100_000);
  });

  it('does not follow a redirect off the allowed hosts, nor send credentials there', async () => {
    handler = (res) => res.writeHead(302, { location: 'http://example.com/r.wav' }).end();
    expect(await fetcher().fetch(`${base}/r.wav`)).toEqual({
      kind: 'failed',
      reason: 'recording: redirect to example.com is not in RECORDING_FETCH_HOSTS',
    });
  });

  describe('under the tenant rule (multi mode)', () => {
    let allowedServer: Server;
    let counting: Server;
    let countingPort: number;
    let allowedPort: number;
    let connections = 0;
    let location = '';

    beforeAll(async () => {
      // 127.0.0.2 stands for a tenant's public PBX (the operator allows just that address); 127.0.0.1, where
      // the counting server listens, is loopback: refused.
      allowedServer = createServer((_, res) => res.writeHead(302, { location }).end());
      await new Promise<void>((resolve) => allowedServer.listen(0, '127.0.0.2', resolve));
      allowedPort = (allowedServer.address() as AddressInfo).port;
      counting = createServer((_, res) => res.writeHead(200, { 'content-type': 'audio/wav' }).end(wav(100)));
      counting.on('connection', () => (connections += 1));
      await new Promise<void>((resolve) => counting.listen(0, '127.0.0.1', resolve));
      countingPort = (counting.address() as AddressInfo).port;
    });
    afterAll(async () => {
      allowedServer.closeAllConnections();
      counting.closeAllConnections();
      await new Promise((resolve) => allowedServer.close(resolve));
      await new Promise((resolve) => counting.close(resolve));
    });

    const tenantFetcher = () => {
      const allowed = allowedNetworksOf(['127.0.0.2/32']);
      if ('problem' in allowed) throw new Error(allowed.problem);
      return new RecordingFetcher({
        hosts: new RecordingHosts([
          `127.0.0.2:${allowedPort}`,
          `127.0.0.1:${countingPort}`,
          `localhost:${countingPort}`,
          '169.254.169.254',
        ]),
        // No credentials: the address rule and the lookup refuse these, not the rule on credentials in clear.
        maxBytes: 1000,
        timeoutMs: 2000,
        egress: EgressPolicy.forTenants(allowed),
      });
    };

    it('refuses a redirect to the metadata address, to loopback, or to a name resolving there: no connection', async () => {
      for (const [to, reason] of [
        [
          'http://169.254.169.254/latest/meta-data',
          /redirect to recordingUrl: 169\.254\.169\.254:80 is in a range/,
        ],
        [
          `http://127.0.0.1:${countingPort}/r.wav`,
          /redirect to recordingUrl: 127\.0\.0\.1:\d+ is in a range/,
        ],
        [`http://localhost:${countingPort}/r.wav`, /redirect to localhost resolves to an address in a range/],
      ] as const) {
        location = to;
        const outcome = await tenantFetcher().fetch(`http://127.0.0.2:${allowedPort}/r.wav`);
        expect(outcome).toEqual({ kind: 'failed', reason: expect.stringMatching(reason) });
      }
      expect(connections).toBe(0);
    });

    it('refuses a recordingUrl on loopback at the first hop, by address or by name', async () => {
      for (const host of ['127.0.0.1', 'localhost']) {
        expect(await tenantFetcher().fetch(`http://${host}:${countingPort}/r.wav`)).toMatchObject({
          kind: 'failed',
        });
      }
      expect(connections).toBe(0);
    });

    it('sends RECORDING_FETCH_AUTH in clear only to an address the operator allowed', async () => {
      const open = EgressPolicy.forTenants(new BlockList());
      const fetcher = new RecordingFetcher({
        hosts: new RecordingHosts(['pbx.example.com']),
        authorization: 'Bearer rec-t0ken',
        maxBytes: 1000,
        timeoutMs: 2000,
        egress: open,
      });
      expect(await fetcher.fetch('http://pbx.example.com/r.wav')).toEqual({
        kind: 'failed',
        reason: expect.stringContaining('credentials travel only over TLS'),
      });
    });
  });
});
