import { ConnectorError, EgressPolicy } from '../../common/egress';
import {
  checkedTarget,
  FailureDetails,
  oneLine,
  parsePbxTarget,
  pbxLabel,
  PbxSession,
  PbxSessionOptions,
  PbxTarget,
} from '../pbx-connection';
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
  return parsePbxTarget(url, egress, { url: 'ESL_URL', variable });
}

export function eslTargetOf(url: string, egress: EgressPolicy, variable = 'ESL_URL'): EslTarget {
  return checkedTarget(parseEslTarget(url, egress, variable));
}

/** An event socket failure whose message names the address and never the password. */
export class EslError extends ConnectorError {}

export type EslSessionOptions = PbxSessionOptions<EslEvent>;

interface Waiting {
  what: string;
  resolve: (message: EslMessage) => void;
  reject: (error: Error) => void;
}

/**
 * One long-lived event socket session, inbound mode (real PBX output): `auth/request`, `auth`/`userauth`,
 * then commands. Replies (`command/reply`, `api/response`) come in the order the commands were sent, so a
 * FIFO matches them; events (`text/event-json`) are handed on as they come. The oldest unanswered command
 * bounds the wait: no reply within timeoutMs ends the session (dead peer). `text/disconnect-notice` and an
 * ACL refusal (`text/rude-rejection`) end it too.
 */
export class EslSession extends PbxSession<EslEvent> {
  private readonly waiting: Waiting[] = [];
  private timer?: NodeJS.Timeout;

  /** Connects and logs in; rejects with an EslError (address, reason; never the password). */
  static async open(target: EslTarget, options: EslSessionOptions): Promise<EslSession> {
    const session = new EslSession(pbxLabel(target), options);
    const framer = new EslFramer((message) => session.received(message));
    await session.connect(target, 'auth/request', (chunk) => {
      framer.push(chunk as Buffer);
      if (session.established) options.onRead?.();
    });
    return session;
  }

  protected async login(target: EslTarget): Promise<void> {
    const login = target.user
      ? `userauth ${oneLine(target.user)}:${oneLine(target.password)}`
      : `auth ${oneLine(target.password)}`;
    const text = (await this.command(login, 'the login')).headers['Reply-Text'] ?? '';
    if (!text.startsWith('+OK')) {
      const who = target.user ? `user ${oneLine(target.user)}` : 'the password';
      throw new EslError(`login refused for ${who} at ${this.label}: ${oneLine(text) || 'no reason given'}`, {
        credentialsRefused: true,
      });
    }
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

  ping(): Promise<string> {
    return this.api('status');
  }

  protected goodbye(): Promise<EslMessage> {
    return this.command('exit');
  }

  protected goodbyeText(): string {
    return 'exit\n\n';
  }

  protected failure(message: string, details?: FailureDetails): EslError {
    return new EslError(message, details);
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
        this.greeted?.('');
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

  protected abandon(error: EslError): void {
    clearTimeout(this.timer);
    for (const waiting of this.waiting.splice(0)) waiting.reject(error);
  }
}
