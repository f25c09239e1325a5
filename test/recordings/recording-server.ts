import { createHash } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

export const REC_USER = 'rec';
export const REC_PASSWORD = 'rec-secret-5b1e';

/** A wav file of `bytes` bytes: a RIFF/WAVE header, then pseudo-random samples (stable per seed). */
export function wavFile(bytes: number, seed = 1): Buffer {
  const file = Buffer.alloc(bytes);
  file.write('RIFF', 0, 'latin1');
  file.writeUInt32LE(bytes - 8, 4);
  file.write('WAVEfmt ', 8, 'latin1');
  let x = seed * 2654435761;
  for (let i = 16; i < bytes; i += 1) {
    x = (x * 1103515245 + 12345) >>> 0;
    file[i] = x >>> 24;
  }
  return file;
}

export function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** What one path serves: a file (optionally not before `readyAt`), or a redirect. */
export type Served = { file: Buffer; type: string; readyAt?: number } | { redirect: string };

/**
 * A PBX's private file server on 127.0.0.1 with HTTP Basic auth (except under `/public/`): 401 without the
 * right credentials, 404 for unknown paths and for files not ready yet. Counts the requests per path.
 */
export class RecordingServer {
  readonly hits = new Map<string, number>();
  private readonly paths = new Map<string, Served>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
    readonly port: number,
  ) {}

  static async start(): Promise<RecordingServer> {
    const ready: { self?: RecordingServer } = {};
    const server = createServer((req, res) => ready.self!.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    ready.self = new RecordingServer(server, `http://127.0.0.1:${port}`, port);
    return ready.self;
  }

  serve(path: string, served: Served): string {
    this.paths.set(path, served);
    return `${this.url}${path}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const path = new URL(req.url ?? '/', this.url).pathname;
    this.hits.set(path, (this.hits.get(path) ?? 0) + 1);
    const expected = `Basic ${Buffer.from(`${REC_USER}:${REC_PASSWORD}`).toString('base64')}`;
    if (!path.startsWith('/public/') && req.headers.authorization !== expected) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="rec"' }).end();
      return;
    }
    const served = this.paths.get(path);
    if (!served) {
      res.writeHead(404).end('not found');
      return;
    }
    if ('redirect' in served) {
      res.writeHead(302, { location: served.redirect }).end();
      return;
    }
    if (served.readyAt !== undefined && Date.now() < served.readyAt) {
      res.writeHead(404).end('still converting');
      return;
    }
    res.writeHead(200, { 'content-type': served.type, 'content-length': served.file.length });
    res.end(served.file);
  }
}
