import { Socket } from 'node:net';
import { readCredentialUrl } from '../../common/credential-url';
import { ConnectorError, Destination, EgressPolicy } from '../../common/egress';
import { EslEvent, EslFramer, EslMessage, parseJsonEvent, parsePlainEvent } from './esl-message';

/**
 * Where the event socket is: `tcp://:password@host:8021` (mod_event_socket's `auth <password>`), or
 * `tcp://user%40domain:password@host:8021` for a directory user with `esl-password` (`userauth`);
 * `tls://…` for an event socket behind a TLS terminator (stunnel, a proxy: mod_event_socket has no TLS of
 * its own). The address is a Destination of the egress policy, the only way to its socket.
 */
export interface EslTarget {
  destination: Destination;
  tls: boolean;
  /** `user@domain` for `userauth`; empty: `auth`. */
  user: string;
  password: string;
}

/**
 * ESL_URL read by hand (a password may hold any character) and made a Destination by `egress`: the
 * problem names the variable and the rule, never the value.
 */
export function parseEslTarget(
  url: string,
  egress: EgressPolicy,
  variable = 'ESL_URL',
): EslTarget | { problem: string } {
  const parsed = readCredentialUrl(url, 'ESL_URL', variable);
  if ('problem' in parsed) return parsed;
  const tls = parsed.scheme === 'tls';
  const destination = egress.destination({
    variable,
    host: parsed.host,
    port: parsed.port ?? 8021,
    tls,
    credentials: true,
  });
  if ('problem' in destination) return destination;
  return { destination, tls, user: parsed.user, password: parsed.password };
}

/** parseEslTarget for a value already checked (the environment's, a stored setting): a problem throws. */
export function eslTargetOf(url: string, egress: EgressPolicy, variable = 'ESL_URL'): EslTarget {
  const target = parseEslTarget(url, egress, variable);
  if ('problem' in target) throw new Error(target.problem);
  return target;
}

/** The address without credentials, for logs and health details. */
export function eslLabel(target: EslTarget): string {
  return `${target.tls ? 'tls' : 'tcp'}://${target.destination.label}`;
}

/** An event socket failure whose message names the address and never the password. */
export class EslError extends ConnectorError {}

export interface EslSessionOptions {
  /** Each wait (connect, auth/request, a command's reply) is bounded by this. */
  timeoutMs: number;
  /** Every `text/event-json` event, in order. */
  onEvent: (event: EslEvent) => void;
  /** After every read of the socket: the events of one read have all been handed to onEvent. */
  onRead?: () => void;
  /** Once, when an established session ends for any reason. */
  onClose: (error: EslError) => void;
  /** tls://: checks the terminator's certificate (default true; tests against a self-signed one turn it off). */
  rejectUnauthorized?: boolean;
}

interface Waiting {
  what: string;
  resolve: (message: EslMessage) => void;
  reject: (error: Error) => void;
}

/**
 * One long-lived event socket session, inbound mode (real PBX output): `auth/request`, `auth`/`userauth`,
 * then commands. Replies (`command/reply`, `api/response`) come in the order the commands were sent, so a
 * FIFO matches them; events (`text/event-json`) are handed on as they come. The oldest unanswered command
 * bounds the wait: no reply within timeoutMs ends the session (dead peer). `text/disconnect-notice`, an ACL
 * refusal (`text/rude-rejection`), a framing bound or any socket error ends it too (onClose, once).
 */
export class EslSession {
  private readonly waiting: Waiting[] = [];
  private timer?: NodeJS.Timeout;
  private closed = false;
  private established = false;
  private greeted?: () => void;
  private refusedBeforeLogin?: (error: Error) => void;

  private constructor(
    private readonly socket: Socket,
    private readonly label: string,
    private readonly options: EslSessionOptions,
  ) {}

  /** Connects and logs in; rejects with an EslError (address, reason; never the password). */
  static open(target: EslTarget, options: EslSessionOptions): Promise<EslSession> {
    const label = eslLabel(target);
    return new Promise((resolve, reject) => {
      // Through the egress gate: the name is resolved and checked at every connection (SPEC §8).
      const socket: Socket = target.tls
        ? target.destination.connectTls({ rejectUnauthorized: options.rejectUnauthorized ?? true })
        : target.destination.connect();
      const session = new EslSession(socket, label, options);
      const framer = new EslFramer((message) => session.received(message));
      const timer = setTimeout(
        () => session.end(new EslError(`no auth/request from ${label} within ${options.timeoutMs} ms`)),
        options.timeoutMs,
      );
      socket.setKeepAlive(true, 10_000);
      socket.on('data', (chunk: Buffer) => {
        try {
          framer.push(chunk);
        } catch (error) {
          session.end(new EslError(`${(error as Error).message} from ${label}`));
          return;
        }
        if (session.established) options.onRead?.();
      });
      socket.on('error', (error: NodeJS.ErrnoException) =>
        session.end(
          error.code === 'EGRESS_REFUSED'
            ? new EslError(`${label} is not allowed: ${error.message}`, { code: error.code })
            : new EslError(`${error.code ?? error.message} ${label}`, { code: error.code }),
        ),
      );
      socket.on('close', () => session.end(new EslError(`${label} closed the connection`)));
      session.greeted = () => {
        clearTimeout(timer);
        const login = target.user
          ? `userauth ${oneLine(target.user)}:${oneLine(target.password)}`
          : `auth ${oneLine(target.password)}`;
        session.command(login, 'the login').then(
          (reply) => {
            const text = reply.headers['Reply-Text'] ?? '';
            if (!text.startsWith('+OK')) {
              const who = target.user ? `user ${oneLine(target.user)}` : 'the password';
              session.end(
                new EslError(`login refused for ${who} at ${label}: ${oneLine(text) || 'no reason given'}`, {
                  credentialsRefused: true,
                }),
              );
              return;
            }
            session.established = true;
            session.refusedBeforeLogin = undefined;
            resolve(session);
          },
          () => undefined,
        );
      };
      session.refusedBeforeLogin = (error) => {
        clearTimeout(timer);
        reject(error);
      };
    });
  }

  /** Sends one command (`event json …`, `api …`); resolves with its reply. */
  command(text: string, what = text.split(' ').slice(0, 2).join(' ')): Promise<EslMessage> {
    if (this.closed) return Promise.reject(new EslError(`${this.label} is not connected`));
    return new Promise((resolve, reject) => {
      this.waiting.push({ what, resolve, reject });
      if (this.waiting.length === 1) this.armTimer();
      this.socket.write(`${oneLine(text)}\n\n`);
    });
  }

  /** `api <command>`: the response's body (FreeSWITCH's output). */
  async api(command: string): Promise<string> {
    const reply = await this.command(`api ${command}`, `api ${command}`);
    return reply.body;
  }

  /**
   * Says `exit` and reads on until FreeSWITCH answers it (or timeoutMs): every event it sent before it read
   * the `exit` has been handed on by then. How a stopping bridge leaves without losing what is in flight.
   */
  async exit(): Promise<void> {
    if (this.closed) return;
    await this.command('exit').catch(() => undefined);
    this.end(new EslError(`closed by the bridge (${this.label})`));
  }

  /** Says `exit` and closes. */
  close(): void {
    if (this.closed) return;
    if (this.socket.writable) this.socket.write('exit\n\n');
    this.end(new EslError(`closed by the bridge (${this.label})`));
  }

  private armTimer(): void {
    clearTimeout(this.timer);
    const head = this.waiting[0];
    if (!head) return;
    this.timer = setTimeout(
      () =>
        this.end(
          new EslError(`${head.what} unanswered by ${this.label} within ${this.options.timeoutMs} ms`),
        ),
      this.options.timeoutMs,
    );
  }

  private received(message: EslMessage): void {
    const type = message.headers['Content-Type'] ?? '';
    switch (type) {
      case 'auth/request':
        this.greeted?.();
        this.greeted = undefined;
        return;
      case 'command/reply':
      case 'api/response': {
        const waiting = this.waiting.shift();
        this.armTimer();
        waiting?.resolve(message);
        return;
      }
      case 'text/event-json': {
        if (!this.established) return;
        const event = parseJsonEvent(message.body);
        if (event) this.options.onEvent(event);
        return;
      }
      case 'text/event-plain':
        // A peer (or a proxy in front of it) answering `event json` with plain events is still followed.
        if (this.established) this.options.onEvent(parsePlainEvent(message.body));
        return;
      case 'text/disconnect-notice':
        this.end(new EslError(`${this.label} sent a disconnect notice`));
        return;
      case 'text/rude-rejection':
        this.end(new EslError(`${this.label} refused the connection (the event socket's ACL)`));
        return;
      default:
        return;
    }
  }

  private end(error: EslError): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    for (const waiting of this.waiting.splice(0)) waiting.reject(error);
    this.socket.destroy();
    if (this.established) this.options.onClose(error);
    else this.refusedBeforeLogin?.(error);
  }
}

function oneLine(value: string): string {
  return value.replace(/[\r\n]+/g, ' ');
}
