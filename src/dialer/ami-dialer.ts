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
import { LineConnection, LineDialer, ProtocolMessage } from './line-connection';

export interface AmiOptions {
  /** `tcp://user:secret@host:5038` or `tls://user:secret@host:5039` (a secret). */
  url: string;
  /** Who may be reached: the operator's own settings are unrestricted, a portal's are under SPEC §8's rule. */
  egress: EgressPolicy;
  /** `PJSIP/{extension}`. */
  channel: string;
  context: string;
  timeoutMs?: number;
}

/**
 * Asterisk Manager Interface (written from the AMI documentation; no library: see
 * docs/decisions/click-to-call.md), over TCP or (`tls://`, Asterisk's `tlsbindport`) TLS with the
 * certificate checked. One short connection per click: greeting, `Login`, `Originate` (Async,
 * so the answer comes as soon as Asterisk queued the call), `Logoff`. Replies are matched by ActionID; events in
 * between are skipped.
 */
export class AmiDialer extends LineDialer {
  constructor(private readonly options: AmiOptions) {
    super('AMI_URL', options.url, options.egress, options.timeoutMs);
  }

  async originate(request: OriginateRequest): Promise<void> {
    argumentValue(request.crmCallId, 'the CALL_ID');
    const line = lineValue(request.line);
    await this.loggedIn(async (connection) => {
      const extension = dialString(request.extension);
      const number = dialString(request.number);
      // One variable per header, its value refused if Asterisk would split it (commas) or read a second one;
      // CRM_LINE (the click's line, for the dialplan to pick the trunk and caller ID) only when there is one.
      const variables = [`CRM_CALL_ID=${argumentValue(request.crmCallId, 'the CALL_ID')}`];
      if (line) variables.push(`CRM_LINE=${line}`);
      const originate = await this.action(connection, 'Originate', [
        [
          'Channel',
          oneLine(fillTemplate(this.options.channel, { extension, userId: String(request.userId) })),
        ],
        ['Context', oneLine(this.options.context)],
        ['Exten', number],
        ['Priority', '1'],
        ['Async', 'true'],
        ['CallerID', oneLine(request.callerId ?? number)],
        ['Timeout', '30000'],
        ...variables.map((variable): [string, string] => ['Variable', variable]),
      ]);
      if (!/^success$/i.test(originate.headers.Response ?? '')) {
        throw new DialError(
          `Asterisk refused the Originate: ${oneLine(originate.headers.Message ?? 'no reason given')}`,
        );
      }
    });
  }

  protected async login(connection: LineConnection, label: string): Promise<void> {
    const { user, password } = this.server.url;
    const greeting = await connection.readLine();
    if (!/^Asterisk Call Manager/i.test(greeting)) {
      throw new DialError(`not an Asterisk Manager Interface at ${label}`);
    }
    const login = await this.action(connection, 'Login', [
      ['Username', user],
      ['Secret', password],
    ]);
    if (!/^success$/i.test(login.headers.Response ?? '')) {
      throw new LoginRefused(
        `AMI login refused for user ${oneLine(user)} at ${label}: ${oneLine(login.headers.Message ?? 'no reason given')}`,
      );
    }
  }

  protected goodbye(): string {
    return `Action: Logoff\r\nActionID: ${randomUUID()}\r\n\r\n`;
  }

  private async action(
    connection: LineConnection,
    name: string,
    fields: [string, string][],
  ): Promise<ProtocolMessage> {
    const actionId = randomUUID();
    const lines = [
      `Action: ${name}`,
      `ActionID: ${actionId}`,
      ...fields.map(([key, value]) => `${key}: ${protocolValue(value, `the ${key} header`)}`),
    ];
    connection.send(`${lines.join('\r\n')}\r\n\r\n`);
    return connection.next(
      (message) => message.headers.ActionID === actionId && 'Response' in message.headers,
      `the ${name} action`,
    );
  }
}
