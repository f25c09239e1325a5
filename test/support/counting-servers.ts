import { createServer as createHttpServer, Server as HttpServer } from 'node:http';
import { createServer, Server, Socket } from 'node:net';

/**
 * A TCP listener on 127.0.0.1 that counts every connection made to it and says nothing: what a hostile
 * destination would be. `http` answers 200 with a wav-looking body, so a download that reached it would
 * succeed (its count proves none did).
 */
export class CountingServer {
  connections = 0;
  private readonly sockets = new Set<Socket>();
  private readonly waiting: { count: number; resolve: () => void }[] = [];

  private constructor(private readonly server: Server | HttpServer) {
    server.on('connection', (socket: Socket) => {
      this.connections += 1;
      this.sockets.add(socket);
      socket.on('error', () => undefined);
      for (const waiter of this.waiting.filter((one) => one.count <= this.connections)) {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        waiter.resolve();
      }
    });
  }

  /** Resolves once this server has accepted `count` connections (at once if it has). */
  accepted(count: number): Promise<void> {
    if (this.connections >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push({ count, resolve }));
  }

  static async tcp(): Promise<CountingServer> {
    return CountingServer.listen(new CountingServer(createServer(() => undefined)));
  }

  static async http(): Promise<CountingServer> {
    const wav = Buffer.concat([Buffer.from('RIFF\0\0\0\0WAVE'), Buffer.alloc(500, 7)]);
    return CountingServer.listen(
      new CountingServer(
        createHttpServer((_, response) => response.writeHead(200, { 'content-type': 'audio/wav' }).end(wav)),
      ),
    );
  }

  private static async listen(counting: CountingServer): Promise<CountingServer> {
    await new Promise<void>((resolve) => counting.server.listen(0, '127.0.0.1', resolve));
    return counting;
  }

  get port(): number {
    return (this.server.address() as { port: number }).port;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
