import { createServer, Server } from 'node:http';
import { AddressInfo, connect, createServer as createTcpServer, Server as TcpServer, Socket } from 'node:net';
import { SandboxPortal } from '../../sandbox';
import { CallRetention } from '../../src/store/call-retention';
import { CallStore, RECORDING_CHUNK_BYTES } from '../../src/store/call-store';
import { ended, eventually, Harness, PBX_TOKEN, started, startHarness } from '../support/bridge-harness';
import { clearFaults, injectFault } from '../support/sandbox-inspect';
import { sha256, wavFile } from './recording-server';

/**
 * Issue 26 (findings 9, 12, 20): what one recording may cost the bridge. Real HTTP in, the sandbox portal
 * over real HTTP, the real store (SQLite, or PostgreSQL with TEST_DATABASE=postgres).
 */
const put = (h: Harness, callId: string, body: Buffer) =>
  h.http
    .put(`/v1/calls/${encodeURIComponent(callId)}/recording`)
    .set('Authorization', `Bearer ${PBX_TOKEN}`)
    .set('Content-Type', 'audio/wav')
    .send(body);
const post = (h: Harness, events: unknown[]) =>
  h.http.post('/v1/calls/events').set('Authorization', `Bearer ${PBX_TOKEN}`).send(events);
const status = async (h: Harness, callId: string) =>
  (await h.http.get(`/v1/calls/${callId}`).set('Authorization', `Bearer ${PBX_TOKEN}`)).body;

describe('recordings: store, quota, expiry, parked calls', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({
      RECORDING_QUOTA_MB: '3',
      RECORDING_REQUEST_MAX_MB: '1',
      DELIVERY_MAX_BACKOFF_SEC: '1',
    });
  });
  afterAll(async () => {
    await h.close();
  });

  it('stores a pushed file in chunks of at most 1 MiB, read back one chunk at a time, exact', async () => {
    const callId = `chunks-${Date.now()}`;
    const file = wavFile(2_500_000, 3);
    await post(h, [started(callId)]);
    expect((await put(h, callId, file)).status).toBe(202);
    const content = await h.app.get(CallStore).readRecording('sandbox', callId);
    expect(content?.bytes).toBe(file.length);
    const sizes: number[] = [];
    const parts: Buffer[] = [];
    for await (const chunk of content!.chunks) {
      sizes.push(chunk.length);
      parts.push(Buffer.from(chunk));
    }
    expect(sizes).toEqual([
      RECORDING_CHUNK_BYTES,
      RECORDING_CHUNK_BYTES,
      file.length - 2 * RECORDING_CHUNK_BYTES,
    ]);
    expect(sha256(Buffer.concat(parts))).toBe(sha256(file));
    await h.app.get(CallStore).deleteRecording('sandbox', callId);
  });

  it("refuses a push past the portal's RECORDING_QUOTA_MB with 507 and stores nothing", async () => {
    const first = `quota-a-${Date.now()}`;
    const second = `quota-b-${Date.now()}`;
    // Calls never ended: their recordings wait in the store.
    await post(h, [started(first), started(second)]);
    expect((await put(h, first, wavFile(2_000_000, 4))).status).toBe(202);
    const refused = await put(h, second, wavFile(1_500_000, 5));
    expect(refused.status).toBe(507);
    expect(refused.body.message).toMatch(/RECORDING_QUOTA_MB \(3 MB\)/);
    expect(await h.app.get(CallStore).getRecording('sandbox', second)).toBeUndefined();
    expect((await status(h, second)).recording).toBe('none');
    // Replacing the call's own file counts it once, not twice.
    expect((await put(h, first, wavFile(2_100_000, 6))).status).toBe(202);
    await h.app.get(CallStore).deleteRecording('sandbox', first);
  });

  it('deletes a recording held past RECORDING_KEEP_HOURS whose call never settled', async () => {
    const callId = `expire-${Date.now()}`;
    await post(h, [started(callId)]);
    expect((await put(h, callId, wavFile(100_000, 7))).status).toBe(202);
    const retention = h.app.get(CallRetention);
    await retention.deleteExpired(Date.now() + 71 * 3_600_000);
    expect(await h.app.get(CallStore).getRecording('sandbox', callId)).toBeDefined();
    await retention.deleteExpired(Date.now() + 73 * 3_600_000);
    expect(await h.app.get(CallStore).getRecording('sandbox', callId)).toBeUndefined();
  });

  it('keeps why a parked call failed when a recording is pushed to it', async () => {
    const callId = `parked-${Date.now()}`;
    await injectFault(h.sandbox, {
      kind: 'http',
      status: 400,
      error: 'ERROR_ARGUMENT',
      description: 'the portal refuses this call',
      method: 'telephony.externalcall.register',
    });
    await post(h, [started(callId), ended(callId)]);
    const parked = await eventually(async () => {
      const body = await status(h, callId);
      return body.state === 'failed' ? body : undefined;
    });
    await clearFaults(h.sandbox);
    expect(parked.lastError).toMatch(/register: .*refuses this call/);
    expect((await put(h, callId, wavFile(50_000, 8))).status).toBe(202);
    expect((await status(h, callId)).lastError).toBe(parked.lastError);
  });
});

/**
 * A TCP proxy on 127.0.0.1 in front of the sandbox: `throttle` forwards the bridge's bytes at that many per
 * second; `stallAfter` stops forwarding a connection's bytes once it has sent that many (a link that dies
 * mid-upload). Answers come back as they are.
 */
class SlowLink {
  throttle = Infinity;
  stallAfter = Infinity;
  private constructor(
    private readonly server: TcpServer,
    readonly port: number,
  ) {}

  static async start(target: number): Promise<SlowLink> {
    const holder: { link?: SlowLink } = {};
    const sockets = new Set<Socket>();
    const server = createTcpServer((client) => {
      const upstream = connect(target, '127.0.0.1');
      sockets.add(client).add(upstream);
      let sent = 0;
      client.on('data', (data: Buffer) => {
        const link = holder.link!;
        sent += data.length;
        if (sent > link.stallAfter) return;
        if (link.throttle === Infinity) {
          upstream.write(data);
          return;
        }
        client.pause();
        upstream.write(data);
        setTimeout(() => client.resume(), (data.length / link.throttle) * 1000);
      });
      upstream.pipe(client);
      const end = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('close', end).on('error', end);
      upstream.on('close', end).on('error', end);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    holder.link = new SlowLink(server, (server.address() as AddressInfo).port);
    server.on('close', () => sockets.forEach((socket) => socket.destroy()));
    return holder.link;
  }

  async close(): Promise<void> {
    await new Promise((resolve) => {
      this.server.close(resolve);
      this.server.emit('close');
    });
  }
}

describe('recordings: an upload on a slow or stalled link', () => {
  let h: Harness;
  let link: SlowLink;

  let sandbox: SandboxPortal;

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    const sandboxPort = new URL(sandbox.webhookUrl).port;
    link = await SlowLink.start(Number(sandboxPort));
    h = await startHarness(
      {
        B24_WEBHOOK_URL: sandbox.webhookUrl.replace(`:${sandboxPort}/`, `:${link.port}/`),
        DELIVERY_MAX_BACKOFF_SEC: '1',
        DELIVERY_MAX_ATTEMPTS: '2',
        B24_TIMEOUT_MS: '2000',
        RECORDING_REQUEST_MAX_MB: '4',
      },
      {},
      { sandbox },
    );
  });
  afterAll(async () => {
    await h.close();
    await link.close();
    await sandbox.close();
  });

  it('finishes an upload that takes longer than the request timeout on the wall clock', async () => {
    const callId = `slow-${Date.now()}`;
    const file = wavFile(1_500_000, 9);
    await post(h, [started(callId)]);
    expect((await put(h, callId, file)).status).toBe(202);
    // About 2 MB of base64 at 300 kB/s: 7 s, over B24_TIMEOUT_MS (2 s) but well within the scaled timeout.
    link.throttle = 300_000;
    await post(h, [ended(callId)]);
    const done = await eventually(async () => {
      const body = await status(h, callId);
      return ['attached', 'failed'].includes(body.recording) ? body : undefined;
    }, 90_000);
    link.throttle = Infinity;
    expect(done).toMatchObject({ recording: 'attached', state: 'finished' });
    const records = h.sandbox.calls({ EXTERNAL_CALL_ID: callId })[0].records;
    expect(records).toEqual([expect.objectContaining({ sha256: sha256(file), via: 'content' })]);
  }, 120_000);

  it('counts uploads that stall and gives up after DELIVERY_MAX_ATTEMPTS, the reason in lastError', async () => {
    const callId = `stalled-${Date.now()}`;
    await post(h, [started(callId)]);
    expect((await put(h, callId, wavFile(200_000, 10))).status).toBe(202);
    await eventually(async () => ((await status(h, callId)).state === 'registered' ? true : undefined));
    // A request carrying the file dies after 50 kB; smaller ones go through.
    link.stallAfter = 50_000;
    await post(h, [ended(callId)]);
    const done = await eventually(async () => {
      const body = await status(h, callId);
      return body.recording === 'failed' ? body : undefined;
    }, 90_000);
    link.stallAfter = Infinity;
    expect(done.state).toBe('finished');
    expect(done.lastError).toMatch(/uploadRecord: .*refused 2 times/);
    expect(await h.app.get(CallStore).getRecording('sandbox', callId)).toBeUndefined();
  }, 120_000);
});

describe('recordings: a delivery that stops aborts its downloads', () => {
  it('closes a download in flight when the bridge stops', async () => {
    let closed = false;
    let opened = false;
    let timer: NodeJS.Timeout | undefined;
    // A PBX file server that trickles a wav forever.
    const server: Server = createServer((req, res) => {
      opened = true;
      res.writeHead(200, { 'content-type': 'audio/wav' });
      res.write(wavFile(1000, 11));
      timer = setInterval(() => res.write(Buffer.alloc(10)), 200);
      req.socket.on('close', () => {
        closed = true;
        clearInterval(timer);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const h = await startHarness({ RECORDING_FETCH_HOSTS: `127.0.0.1:${port}` });
    try {
      const callId = `abort-${Date.now()}`;
      await post(h, [started(callId), ended(callId, { recordingUrl: `http://127.0.0.1:${port}/r.wav` })]);
      await eventually(async () => (opened ? true : undefined));
      await h.app.close();
      await eventually(async () => (closed ? true : undefined));
      expect(closed).toBe(true);
    } finally {
      clearInterval(timer);
      server.closeAllConnections();
      server.close();
      await h.sandbox.close();
    }
  });
});

describe("recordings: a hostile or stalled portal's uploadUrl", () => {
  let h: Harness;
  let sandbox: SandboxPortal;
  let hostile: Server;
  let mode: 'endless' | 'stall' = 'endless';
  const timers = new Set<NodeJS.Timeout>();

  beforeAll(async () => {
    // Where the portal's uploadUrl points: answers without end, or takes the upload and never answers.
    hostile = createServer((req, res) => {
      if (mode === 'stall') {
        req.pause();
        return;
      }
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      const timer = setInterval(() => res.write(Buffer.alloc(256 * 1024, 0x20)), 5);
      timers.add(timer);
      res.on('close', () => clearInterval(timer));
    });
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
    sandbox = await SandboxPortal.start();
    sandbox.state.setAddress(`http://127.0.0.1:${(hostile.address() as AddressInfo).port}`);
    h = await startHarness(
      {
        DELIVERY_MAX_BACKOFF_SEC: '1',
        DELIVERY_MAX_ATTEMPTS: '2',
        B24_TIMEOUT_MS: '2000',
        RECORDING_REQUEST_MAX_MB: '1',
      },
      {},
      { sandbox },
    );
  });
  afterAll(async () => {
    await h.close();
    timers.forEach((timer) => clearInterval(timer));
    hostile.closeAllConnections();
    hostile.close();
    await sandbox.close();
  });

  const settled = (callId: string) =>
    eventually(async () => {
      const body = await status(h, callId);
      return ['attached', 'failed'].includes(body.recording) ? body : undefined;
    }, 60_000);

  it('reads a bounded part of an answer that never ends, and goes on', async () => {
    mode = 'endless';
    const callId = `endless-${Date.now()}`;
    await post(h, [started(callId)]);
    expect((await put(h, callId, wavFile(1_200_000, 13))).status).toBe(202);
    await post(h, [ended(callId)]);
    const done = await settled(callId);
    expect(done.state).toBe('finished');
    // The bridge still answers at once.
    expect((await h.http.get('/health/live')).status).toBe(200);
  }, 90_000);

  it('gives up an upload that makes no progress after DELIVERY_MAX_ATTEMPTS, counted, the reason kept', async () => {
    mode = 'stall';
    const callId = `stall-url-${Date.now()}`;
    await post(h, [started(callId)]);
    expect((await put(h, callId, wavFile(1_200_000, 14))).status).toBe(202);
    await post(h, [ended(callId)]);
    const done = await settled(callId);
    expect(done).toMatchObject({ state: 'finished', recording: 'failed' });
    expect(done.lastError).toMatch(/uploadUrl: nothing moved for 2 s/);
    // The content goes once the call's state is stored (the answer is written, then the file forgotten).
    const store = h.app.get(CallStore);
    await eventually(async () =>
      (await store.getRecording('sandbox', callId)) === undefined ? true : undefined,
    );
  }, 90_000);
});
