import { randomUUID } from 'node:crypto';
import {
  argumentValue,
  DialError,
  Dialer,
  dialString,
  fillTemplate,
  oneLine,
  OriginateRequest,
  protocolValue,
} from './dialer';
import { LineConnection, tcpTarget } from './line-connection';

export interface EslOptions {
  /** `tcp://:password@host:8021` (a secret). */
  url: string;
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
  private readonly server: ReturnType<typeof tcpTarget>;

  constructor(private readonly options: EslOptions) {
    super();
    this.server = tcpTarget(options.url, 8021);
    this.target = `esl tcp://${this.server.host}:${this.server.port}`;
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
    const { host, port, password } = this.server;
    const connection = await LineConnection.open(host, port, this.options.timeoutMs ?? 5000);
    try {
      await connection.next((message) => message.headers['Content-Type'] === 'auth/request', 'auth/request');
      connection.send(`auth ${protocolValue(password, 'the ESL password')}\n\n`);
      const auth = await connection.next(
        (message) => message.headers['Content-Type'] === 'command/reply',
        'the auth command',
      );
      const authReply = auth.headers['Reply-Text'] ?? '';
      if (!authReply.startsWith('+OK')) {
        throw new DialError(
          `event socket login refused at ${host}:${port}: ${oneLine(authReply) || 'no reason given'}`,
        );
      }
      return connection;
    } catch (error) {
      connection.close();
      throw error;
    }
  }
}
