import { randomUUID } from 'node:crypto';
import { EgressPolicy } from '../common/egress';
import { lineServerOf, LineServer, reachable } from './dial-destination';
import {
  argumentValue,
  DialError,
  Dialer,
  LoginRefused,
  dialString,
  fillTemplate,
  oneLine,
  OriginateRequest,
  protocolValue,
} from './dialer';
import { LineConnection } from './line-connection';

export interface EslOptions {
  /** `tcp://:password@host:8021`, or `tls://…` for an event socket behind a TLS terminator (a secret). */
  url: string;
  /** Who may be reached: the operator's own settings are unrestricted, a portal's are under SPEC §8's rule. */
  egress: EgressPolicy;
  /** The arguments of `bgapi originate`, with `{crmCallId}`, `{extension}`, `{number}`, `{userId}`. */
  originate: string;
  timeoutMs?: number;
}

/**
 * The FreeSWITCH event socket, inbound mode (written from the mod_event_socket documentation; no library:
 * see docs/decisions/click-to-call.md). One short connection per click: `auth/request` →
 * `auth <password>` → `+OK accepted`; `bgapi originate …` → `+OK Job-UUID: …` (the call is started in the
 * background); `exit`.
 */
export class EslDialer extends Dialer {
  readonly target: string;
  private readonly server: LineServer;

  constructor(private readonly options: EslOptions) {
    super();
    this.server = lineServerOf('ESL_URL', options.url, options.egress);
    this.target = `esl ${this.server.label}`;
  }

  /** The originate arguments for a request, as sent; a CALL_ID FreeSWITCH would split is refused. */
  originateArguments(request: OriginateRequest): string {
    return oneLine(
      fillTemplate(this.options.originate, {
        crmCallId: argumentValue(request.crmCallId, 'the CALL_ID'),
        extension: dialString(request.extension),
        number: dialString(request.number),
        userId: String(request.userId),
      }),
    );
  }

  /** Connects, authenticates and leaves: what the application's page's "test connection" asks. */
  override async checkLogin(): Promise<void> {
    const connection = await this.loggedIn();
    try {
      connection.send('exit\n\n');
    } finally {
      connection.close();
    }
  }

  async originate(request: OriginateRequest): Promise<void> {
    const command = `bgapi originate ${protocolValue(this.originateArguments(request), 'the originate')}`;
    const connection = await this.loggedIn();
    try {
      const jobUuid = randomUUID();
      connection.send(`${command}\nJob-UUID: ${jobUuid}\n\n`);
      const reply = await connection.next(
        (message) => message.headers['Content-Type'] === 'command/reply',
        'bgapi originate',
      );
      const text = reply.headers['Reply-Text'] ?? '';
      if (!text.startsWith('+OK')) {
        throw new DialError(`FreeSWITCH refused the originate: ${oneLine(text) || 'no reason given'}`);
      }
      connection.send('exit\n\n');
    } finally {
      connection.close();
    }
  }

  /** A connection past `auth`; closed when it fails. */
  private async loggedIn(): Promise<LineConnection> {
    const { url, tls, destination } = this.server;
    const where = reachable(destination);
    const connection = await LineConnection.open(where, tls, this.options.timeoutMs ?? 5000);
    try {
      await connection.next((message) => message.headers['Content-Type'] === 'auth/request', 'auth/request');
      connection.send(`auth ${protocolValue(url.password, 'the ESL password')}\n\n`);
      const auth = await connection.next(
        (message) => message.headers['Content-Type'] === 'command/reply',
        'the auth command',
      );
      const authReply = auth.headers['Reply-Text'] ?? '';
      if (!authReply.startsWith('+OK')) {
        throw new LoginRefused(
          `event socket login refused at ${where.label}: ${oneLine(authReply) || 'no reason given'}`,
        );
      }
      return connection;
    } catch (error) {
      connection.close();
      throw error;
    }
  }
}
