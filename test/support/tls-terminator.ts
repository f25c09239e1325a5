import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, Server } from 'node:tls';

/**
 * A TLS listener in front of a plain TCP double (as Asterisk's tlsbindaddr, or a terminator in front of
 * FreeSWITCH's event socket), with a self-signed certificate for 127.0.0.1 made by openssl (as the AMI
 * follower's TLS spec makes its own). `certFile` is what a process trusts through node's own
 * NODE_EXTRA_CA_CERTS.
 */
export class TlsTerminator {
  private constructor(
    private readonly open: Set<Socket>,
    private readonly server: Server,
    private readonly dir: string,
    readonly certFile: string,
  ) {}

  static async start(plainPort: number): Promise<TlsTerminator> {
    const dir = mkdtempSync(join(tmpdir(), 'dial-tls-'));
    const certFile = join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        certFile,
      ],
      { stdio: 'ignore' },
    );
    const sockets = new Set<Socket>();
    const server = createServer(
      { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(certFile) },
      (secure) => {
        const plain = connect(plainPort, '127.0.0.1');
        sockets.add(secure).add(plain);
        secure.pipe(plain).pipe(secure);
        secure.on('error', () => plain.destroy());
        plain.on('error', () => secure.destroy());
      },
    );
    server.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new TlsTerminator(sockets, server, dir, certFile);
  }

  get port(): number {
    return (this.server.address() as { port: number }).port;
  }

  async close(): Promise<void> {
    for (const socket of this.open) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
