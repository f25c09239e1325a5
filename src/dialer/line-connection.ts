import { connect, Socket } from 'node:net';
import { DialError, networkCause } from './dialer';

/** One parsed protocol message: headers (`Key: Value` lines) and an optional body. */
export interface ProtocolMessage {
  headers: Record<string, string>;
  body?: string;
}

/**
 * A TCP connection to a PBX's text protocol (AMI, the FreeSWITCH event socket): messages are `Key: Value`
 * lines ended by a blank line; a `Content-Length` header announces a body (ESL). Every wait is bounded by
 * `timeoutMs`, and a refused or dropped connection becomes a DialError naming the address, never
 * credentials.
 */
export class LineConnection {
  private buffer = '';
  private readonly queue: ProtocolMessage[] = [];
  private waiter?: { resolve: () => void; reject: (error: Error) => void };
  private failure?: Error;
  private firstLine?: (line: string) => void;

  private constructor(
    private readonly socket: Socket,
    private readonly label: string,
    private readonly timeoutMs: number,
  ) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.received(chunk));
    socket.on('error', (error) => this.fail(new DialError(`PBX unreachable: ${networkCause(error)}`)));
    socket.on('close', () => this.fail(new DialError(`PBX closed the connection (${label})`)));
  }

  /** Connects to host:port; rejects with `PBX unreachable: ECONNREFUSED host:port` and the like. */
  static open(host: string, port: number, timeoutMs: number): Promise<LineConnection> {
    const label = `${host}:${port}`;
    return new Promise((resolve, reject) => {
      const socket = connect({ host, port });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new DialError(`PBX unreachable: no connection to ${label} within ${timeoutMs} ms`));
      }, timeoutMs);
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.removeAllListeners('error');
        resolve(new LineConnection(socket, label, timeoutMs));
      });
      socket.once('error', (error) => {
        clearTimeout(timer);
        reject(new DialError(`PBX unreachable: ${networkCause(error)}`));
      });
    });
  }

  /** Reads one line before any message (AMI's greeting). */
  readLine(): Promise<string> {
    return this.bounded(
      new Promise<string>((resolve, reject) => {
        const newline = this.buffer.indexOf('\n');
        if (newline >= 0) {
          const line = this.buffer.slice(0, newline).replace(/\r$/, '');
          this.buffer = this.buffer.slice(newline + 1);
          resolve(line);
          return;
        }
        if (this.failure) return reject(this.failure);
        this.firstLine = resolve;
        this.waiter = { resolve: () => undefined, reject };
      }),
      'a greeting',
    );
  }

  send(text: string): void {
    this.socket.write(text);
  }

  /** The next message for which `accept` is true; others are skipped (events, unrelated replies). */
  async next(accept: (message: ProtocolMessage) => boolean, what: string): Promise<ProtocolMessage> {
    for (;;) {
      const message = this.queue.shift();
      if (message) {
        if (accept(message)) return message;
        continue;
      }
      if (this.failure) throw this.failure;
      await this.bounded(new Promise<void>((resolve, reject) => (this.waiter = { resolve, reject })), what);
    }
  }

  /** Ends the connection after what was sent (a Logoff, an exit); destroyed if the PBX does not close it. */
  close(): void {
    this.socket.end();
    setTimeout(() => this.socket.destroy(), 1000).unref();
  }

  private bounded<T>(promise: Promise<T>, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(new DialError(`PBX did not answer (${what}) within ${this.timeoutMs} ms (${this.label})`)),
        this.timeoutMs,
      );
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
  }

  private fail(error: Error): void {
    this.failure ??= error;
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.reject(this.failure);
  }

  private received(chunk: string): void {
    this.buffer += chunk;
    if (this.firstLine) {
      const newline = this.buffer.indexOf('\n');
      if (newline < 0) return;
      const line = this.buffer.slice(0, newline).replace(/\r$/, '');
      this.buffer = this.buffer.slice(newline + 1);
      const resolve = this.firstLine;
      this.firstLine = undefined;
      this.waiter = undefined;
      resolve(line);
    }
    while (this.parseOne());
    const waiter = this.waiter;
    if (waiter && this.queue.length) {
      this.waiter = undefined;
      waiter.resolve();
    }
  }

  /** Takes one complete message off the buffer; false when none is complete yet. */
  private parseOne(): boolean {
    const match = /\r?\n\r?\n/.exec(this.buffer);
    if (!match) return false;
    const head = this.buffer.slice(0, match.index);
    const headers: Record<string, string> = {};
    for (const line of head.split(/\r?\n/)) {
      const colon = line.indexOf(':');
      if (colon > 0) headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
    }
    let rest = this.buffer.slice(match.index + match[0].length);
    let body: string | undefined;
    const length = Number(headers['Content-Length']);
    if (length > 0) {
      if (Buffer.byteLength(rest) < length) return false;
      const bytes = Buffer.from(rest);
      body = bytes.subarray(0, length).toString();
      rest = bytes.subarray(length).toString();
    }
    this.buffer = rest;
    if (head.trim()) this.queue.push({ headers, body });
    return true;
  }
}

/** host, port, user and password of a `tcp://user:password@host:port` URL (percent-decoded). */
export function tcpTarget(url: string, defaultPort: number) {
  const parsed = new URL(url);
  return {
    host: parsed.hostname,
    port: parsed.port ? Number(parsed.port) : defaultPort,
    user: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
  };
}
