import { randomUUID } from 'node:crypto';
import { EgressPolicy } from '../common/egress';
import {
  argumentValue,
  DialError,
  LoginRefused,
  dialString,
  fillTemplate,
  lineValue,
  oneLine,
  OriginateRequest,
  protocolValue,
} from './dialer';
import { LineConnection, LineDialer } from './line-connection';

export interface EslOptions {
  /** `tcp://:password@host:8021`, or `tls://…` for an event socket behind a TLS terminator (a secret). */
  url: string;
  /** Who may be reached: the operator's own settings are unrestricted, a portal's are under SPEC §8's rule. */
  egress: EgressPolicy;
  /** The arguments of `bgapi originate`, with `{crmCallId}`, `{extension}`, `{number}`, `{userId}`, `{line}`. */
  originate: string;
  timeoutMs?: number;
}

/**
 * The FreeSWITCH event socket, inbound mode (written from the mod_event_socket documentation; no library:
 * see docs/decisions/click-to-call.md). One short connection per click: `auth/request` →
 * `auth <password>` → `+OK accepted`; `bgapi originate …` → `+OK Job-UUID: …` (the call is started in the
 * background); `exit`.
 */
export class EslDialer extends LineDialer {
  constructor(private readonly options: EslOptions) {
    super('ESL_URL', options.url, options.egress, options.timeoutMs);
  }

  /** The originate arguments for a request, as sent; a CALL_ID FreeSWITCH would split is refused. */
  originateArguments(request: OriginateRequest): string {
    return oneLine(
      fillTemplate(this.options.originate, {
        crmCallId: argumentValue(request.crmCallId, 'the CALL_ID'),
        extension: dialString(request.extension),
        number: dialString(request.number),
        userId: String(request.userId),
        // The click's line, empty when it named none (`crm_line=` sets nothing the dialplan would use).
        line: lineValue(request.line),
      }),
    );
  }

  async originate(request: OriginateRequest): Promise<void> {
    const command = `bgapi originate ${protocolValue(this.originateArguments(request), 'the originate')}`;
    await this.loggedIn(async (connection) => {
      connection.send(`${command}\nJob-UUID: ${randomUUID()}\n\n`);
      const reply = await connection.next(
        (message) => message.headers['Content-Type'] === 'command/reply',
        'bgapi originate',
      );
      const text = reply.headers['Reply-Text'] ?? '';
      if (!text.startsWith('+OK')) {
        throw new DialError(`FreeSWITCH refused the originate: ${oneLine(text) || 'no reason given'}`);
      }
    });
  }

  protected async login(connection: LineConnection, label: string): Promise<void> {
    await connection.next((message) => message.headers['Content-Type'] === 'auth/request', 'auth/request');
    connection.send(`auth ${protocolValue(this.server.url.password, 'the ESL password')}\n\n`);
    const auth = await connection.next(
      (message) => message.headers['Content-Type'] === 'command/reply',
      'the auth command',
    );
    const authReply = auth.headers['Reply-Text'] ?? '';
    if (!authReply.startsWith('+OK')) {
      throw new LoginRefused(
        `event socket login refused at ${label}: ${oneLine(authReply) || 'no reason given'}`,
      );
    }
  }

  protected goodbye(): string {
    return 'exit\n\n';
  }
}
