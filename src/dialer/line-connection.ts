import { Socket } from 'node:net';
import { Destination, EgressPolicy, EgressRefused } from '../common/egress';
import { DialError, Dialer, networkCause } from './dialer';
import { LineServer, lineServerOf, reachable, refusedFor } from './dial-destination';

/** One parsed protocol message: headers (`Key: Value` lines) and an optional body. */
export interface ProtocolMessage {
  headers: Record<string, string>;
  body?: string;
}

/** The longest message head (or greeting line) a PBX may send: AMI and ESL heads are a few hundred bytes. */
export const MAX_HEAD_BYTES = 64 * 1024;
/** The longest body a `Content-Length` may announce (ESL replies and events are far smaller). */
export const MAX_BODY_BYTES = 1024 * 1024;
/** All a PBX may send on one short connection (events between the replies included). */
export const MAX_RECEIVED_BYTES = 4 * 1024 * 1024;

/**
 * A TCP (or TLS) connection to a PBX's text protocol (AMI, the FreeSWITCH event socket): messages are `Key: Value`
 * lines ended by a blank line; a `Content-Length` header announces a body (ESL). Every wait is bounded by
 * `timeoutMs`, and a refused or dropped connection becomes a DialError naming the address, never
 * credentials. What a PBX sends is bounded (a line or head, a body, the whole connection): past a bound the
 * connection is dropped with a DialError saying which, so an endless line or stream costs a few MiB at most.
 */
export class LineConnection {
  private buffer = '';
  private readonly queue: ProtocolMessage[] = [];
  private waiter?: { resolve: () => void; reject: (error: Error) => void };
  private failure?: Error;
  private firstLine?: (line: string) => void;
  private received = 0;

  private constructor(
    private readonly socket: Socket,
    private readonly label: string,
    private readonly timeoutMs: number,
  ) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.receive(chunk));
    socket.on('error', (error) => this.fail(new DialError(`PBX unreachable: ${networkCause(error)}`)));
    socket.on('close', () => this.fail(new DialError(`PBX closed the connection (${label})`)));
  }

  /**
   * Connects to a checked destination (its name resolved and checked again now, the socket to the address
   * that passed), over TLS from the first byte when `tls`; rejects with `PBX unreachable: ECONNREFUSED
   * host:port` and the like, or with the EgressRefused the gate answered (naming the setting and the rule).
   */
  static open(destination: Destination, tls: boolean, timeoutMs: number): Promise<LineConnection> {
    const label = destination.label;
    return new Promise((resolve, reject) => {
      const socket = tls ? destination.connectTls() : destination.connect();
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new DialError(`PBX unreachable: no connection to ${label} within ${timeoutMs} ms`));
      }, timeoutMs);
      socket.once(tls ? 'secureConnect' : 'connect', () => {
        clearTimeout(timer);
        socket.removeAllListeners('error');
        resolve(new LineConnection(socket, label, timeoutMs));
      });
      socket.once('error', (error) => {
        clearTimeout(timer);
        socket.destroy();
        if (error instanceof EgressRefused) return reject(refusedFor(destination.variable, error));
        const cause = networkCause(error);
        reject(new DialError(`PBX unreachable: ${cause}${cause.includes(label) ? '' : ` (${label})`}`));
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

  /**
   * The next message for which `accept` is true; others are skipped (events, unrelated replies). The whole
   * wait is bounded by `timeoutMs`, however many skipped messages arrive meanwhile.
   */
  async next(accept: (message: ProtocolMessage) => boolean, what: string): Promise<ProtocolMessage> {
    const deadline = Date.now() + this.timeoutMs;
    for (;;) {
      const message = this.queue.shift();
      if (message) {
        if (accept(message)) return message;
        continue;
      }
      if (this.failure) throw this.failure;
      await this.bounded(
        new Promise<void>((resolve, reject) => (this.waiter = { resolve, reject })),
        what,
        deadline - Date.now(),
      );
    }
  }

  /** Ends the connection after what was sent (a Logoff, an exit); destroyed if the PBX does not close it. */
  close(): void {
    this.socket.end();
    setTimeout(() => this.socket.destroy(), 1000).unref();
  }

  private bounded<T>(promise: Promise<T>, what: string, waitMs = this.timeoutMs): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(new DialError(`PBX did not answer (${what}) within ${this.timeoutMs} ms (${this.label})`)),
        Math.max(0, waitMs),
      );
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
  }

  /** A PBX past a bound: the connection is dropped and every wait fails with the reason. */
  private drop(reason: string): void {
    this.buffer = '';
    this.queue.length = 0;
    this.fail(new DialError(`PBX ${reason}: connection dropped (${this.label})`));
    this.socket.destroy();
  }

  private fail(error: Error): void {
    this.failure ??= error;
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.reject(this.failure);
  }

  private receive(chunk: string): void {
    if (this.failure) return;
    this.received += Buffer.byteLength(chunk);
    if (this.received > MAX_RECEIVED_BYTES) {
      return this.drop(`sent more than ${MAX_RECEIVED_BYTES} bytes on one connection`);
    }
    this.buffer += chunk;
    if (this.firstLine) {
      const newline = this.buffer.indexOf('\n');
      if (newline < 0) {
        if (Buffer.byteLength(this.buffer) > MAX_HEAD_BYTES) {
          this.drop(`sent a line or message head longer than ${MAX_HEAD_BYTES} bytes`);
        }
        return;
      }
      const line = this.buffer.slice(0, newline).replace(/\r$/, '');
      this.buffer = this.buffer.slice(newline + 1);
      const resolve = this.firstLine;
      this.firstLine = undefined;
      this.waiter = undefined;
      resolve(line);
    }
    while (this.parseOne());
    if (this.failure) return;
    // What is left is an incomplete message: its head, or a body still arriving.
    const headEnd = /\r?\n\r?\n/.exec(this.buffer);
    if (!headEnd && Buffer.byteLength(this.buffer) > MAX_HEAD_BYTES) {
      return this.drop(`sent a line or message head longer than ${MAX_HEAD_BYTES} bytes`);
    }
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
    if (length > MAX_BODY_BYTES) {
      this.drop(`announced a body of ${length} bytes (at most ${MAX_BODY_BYTES})`);
      return false;
    }
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

/**
 * A dialer over one short connection per click to a PBX's text protocol (AMI, the event socket): the
 * greeting and login, the request, the goodbye once it is accepted; the connection is closed in any case.
 */
export abstract class LineDialer extends Dialer {
  readonly target: string;
  protected readonly server: LineServer;

  constructor(
    variable: LineServer['variable'],
    url: string,
    egress: EgressPolicy,
    private readonly timeoutMs = 5000,
  ) {
    super();
    this.server = lineServerOf(variable, url, egress);
    this.target = `${variable === 'AMI_URL' ? 'ami' : 'esl'} ${this.server.label}`;
  }

  /** Past the greeting: logs in (`label` names the address in a refusal, a LoginRefused). */
  protected abstract login(connection: LineConnection, label: string): Promise<void>;
  /** `Logoff`, `exit`: sent after an accepted request. */
  protected abstract goodbye(): string;

  /** Connects, logs in and leaves: what the application's page's "test connection" asks. */
  override checkLogin(): Promise<void> {
    return this.loggedIn(() => Promise.resolve());
  }

  /** `use` on a logged-in connection, then the goodbye; the connection is closed when anything fails. */
  protected async loggedIn(use: (connection: LineConnection) => Promise<void>): Promise<void> {
    const where = reachable(this.server.destination);
    const connection = await LineConnection.open(where, this.server.tls, this.timeoutMs);
    try {
      await this.login(connection, where.label);
      await use(connection);
      connection.send(this.goodbye());
    } finally {
      connection.close();
    }
  }
}
