import { createServer, Server, Socket } from 'node:net';

/**
 * What the PBX protocol doubles (AMI, event socket) share: a TCP server on 127.0.0.1 that keeps its
 * connections so `close` can end them, and hands each to `serve` with utf8 text and errors ignored.
 */
export abstract class TcpDouble {
  private readonly server: Server = createServer((socket) => {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.setEncoding('utf8');
    this.serve(socket);
  });
  private readonly sockets = new Set<Socket>();

  /** Speaks the protocol on one connection. */
  protected abstract serve(socket: Socket): void;

  get port(): number {
    return (this.server.address() as { port: number }).port;
  }

  listen(port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => resolve());
    });
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
