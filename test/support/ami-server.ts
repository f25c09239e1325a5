import { randomUUID } from 'node:crypto';
import { Socket } from 'node:net';
import { TcpDouble } from './tcp-double';

/** One AMI action as the double received it: its `Key: Value` lines, `Variable` possibly repeated. */
export interface AmiAction {
  [key: string]: string | string[];
}

/**
 * An Asterisk Manager Interface double, written from the AMI documentation: on connect it sends the greeting
 * line `Asterisk Call Manager/6.0.0`, then reads actions (`Key: Value` lines, a blank line ends one) and
 * answers each with `Response:` and the same `ActionID`. `Login` succeeds only with the configured user and
 * secret (else `Response: Error`, `Message: Authentication failed`); `Originate` needs a login, answers
 * `Response: Success` (`Message: Originate successfully queued`) and later sends the `OriginateResponse`
 * event; `Logoff` answers `Goodbye` and closes. Every action received is recorded.
 */
export class AmiServer extends TcpDouble {
  readonly actions: AmiAction[] = [];
  /** When each action was read (Date.now(), the moment its blank line arrived), for benchmarks. */
  private readonly receivedAt = new WeakMap<AmiAction, number>();

  private constructor(
    private readonly user: string,
    private readonly secret: string,
  ) {
    super();
  }

  static async start(user: string, secret: string, port = 0): Promise<AmiServer> {
    const server = new AmiServer(user, secret);
    await server.listen(port);
    return server;
  }

  url(secret = this.secret): string {
    return `tcp://${encodeURIComponent(this.user)}:${encodeURIComponent(secret)}@127.0.0.1:${this.port}`;
  }

  originates(): AmiAction[] {
    return this.actions.filter((action) => action.Action === 'Originate');
  }

  /** The Date.now() at which the double read `action`. */
  arrivalOf(action: AmiAction): number | undefined {
    return this.receivedAt.get(action);
  }

  protected serve(socket: Socket): void {
    socket.write('Asterisk Call Manager/6.0.0\r\n');
    let loggedIn = false;
    let buffer = '';
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      let end: number;
      while ((end = buffer.indexOf('\r\n\r\n')) >= 0) {
        const text = buffer.slice(0, end);
        buffer = buffer.slice(end + 4);
        const action: AmiAction = {};
        for (const line of text.split('\r\n')) {
          const colon = line.indexOf(':');
          if (colon < 0) continue;
          const key = line.slice(0, colon).trim();
          const value = line.slice(colon + 1).trim();
          const before = action[key];
          action[key] = before === undefined ? value : [...[before].flat(), value];
        }
        this.receivedAt.set(action, Date.now());
        this.actions.push(action);
        const id = String(action.ActionID ?? '');
        const reply = (lines: string[]) =>
          socket.write(`${[...lines, `ActionID: ${id}`].join('\r\n')}\r\n\r\n`);
        switch (action.Action) {
          case 'Login':
            loggedIn = action.Username === this.user && action.Secret === this.secret;
            reply(
              loggedIn
                ? ['Response: Success', 'Message: Authentication accepted']
                : ['Response: Error', 'Message: Authentication failed'],
            );
            break;
          case 'Originate':
            if (!loggedIn) {
              reply(['Response: Error', 'Message: Permission denied']);
              break;
            }
            reply(['Response: Success', 'Message: Originate successfully queued']);
            setTimeout(() => {
              if (socket.writable) {
                socket.write(
                  [
                    'Event: OriginateResponse',
                    `ActionID: ${id}`,
                    'Response: Success',
                    `Channel: ${String(action.Channel)}-00000001`,
                    `Context: ${String(action.Context)}`,
                    `Exten: ${String(action.Exten)}`,
                    'Reason: 4',
                    `Uniqueid: ${randomUUID()}`,
                  ].join('\r\n') + '\r\n\r\n',
                );
              }
            }, 20);
            break;
          case 'Logoff':
            reply(['Response: Goodbye', 'Message: Thanks for all the fish.']);
            socket.end();
            break;
          default:
            reply(['Response: Error', 'Message: Invalid/unknown command']);
        }
      }
    });
  }
}
