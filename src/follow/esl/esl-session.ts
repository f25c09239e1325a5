import { Socket } from 'node:net';
import { ConnectorError, EgressPolicy } from '../../common/egress';
import { checkedTarget, connectPbx, oneLine, parsePbxTarget, pbxLabel, PbxTarget } from '../pbx-connection';
import { EslEvent, EslFramer, EslMessage, parseJsonEvent, parsePlainEvent } from './esl-message';

/**
 * Where the event socket is: `tcp://:password@host:8021` (mod_event_socket's `auth <password>`), or
 * `tcp://user%40domain:password@host:8021` for a directory user with `esl-password` (`userauth`: `user`
 * is `user@domain`); `tls://…` for an event socket behind a TLS terminator (stunnel, a proxy:
 * mod_event_socket has no TLS of its own).
 */
export type EslTarget = PbxTarget;

export function parseEslTarget(
  url: string,
  egress: EgressPolicy,
  variable = 'ESL_URL',
): EslTarget | { problem: string } {
  return parsePbxTarget(url, egress, { url: 'ESL_URL', variable, port: () => 8021 });
}

export function eslTargetOf(url: string, egress: EgressPolicy, variable = 'ESL_URL'): EslTarget {
  return checkedTarget(parseEslTarget(url, egress, variable));
}

export const eslLabel = pbxLabel;

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

  private socket: Socket;

  private constructor(
    private readonly label: string,
    private readonly options: EslSessionOptions,
  ) {}

  /** Connects and logs in; rejects with an EslError (address, reason; never the password). */
  static open(target: EslTarget, options: EslSessionOptions): Promise<EslSession> {
    const label = eslLabel(target);
    return new Promise((resolve, reject) => {
      const session = new EslSession(label, options);
      const framer = new EslFramer((message) => session.received(message));
      const timer = setTimeout(
        () => session.end(new EslError(`no auth/request from ${label} within ${options.timeoutMs} ms`)),
        options.timeoutMs,
      );
      session.socket = connectPbx(target, {
        label,
        rejectUnauthorized: options.rejectUnauthorized,
        onData: (chunk) => {
          framer.push(chunk as Buffer);
          if (session.established) options.onRead?.();
        },
        end: (message, details) => session.end(new EslError(message, details)),
      });
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
