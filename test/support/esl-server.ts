import { randomUUID } from 'node:crypto';
import { Socket } from 'node:net';
import { TcpDouble } from './tcp-double';

/**
 * A FreeSWITCH event socket double (inbound mode), written from the mod_event_socket documentation: on
 * connect it sends `Content-Type: auth/request`; commands are lines ended by a blank line. `auth <password>`
 * answers `Content-Type: command/reply` with `Reply-Text: +OK accepted` or `-ERR invalid` (and closes);
 * `bgapi <command>` answers `Reply-Text: +OK Job-UUID: <uuid>` (the Job-UUID header's, when given), and
 * later sends the `BACKGROUND_JOB` event's body; `exit` answers `+OK bye` and closes. Every command received
 * is recorded (the auth password too, for the test to check).
 */
export class EslServer extends TcpDouble {
  readonly commands: { command: string; headers: Record<string, string> }[] = [];

  private constructor(private readonly password: string) {
    super();
  }

  static async start(password: string, port = 0): Promise<EslServer> {
    const server = new EslServer(password);
    await server.listen(port);
    return server;
  }

  url(password = this.password): string {
    return `tcp://:${encodeURIComponent(password)}@127.0.0.1:${this.port}`;
  }

  originates(): string[] {
    return this.commands
      .map((entry) => entry.command)
      .filter((command) => command.startsWith('bgapi originate '));
  }

  protected serve(socket: Socket): void {
    socket.write('Content-Type: auth/request\n\n');
    let authed = false;
    let buffer = '';
    const reply = (text: string) => socket.write(`Content-Type: command/reply\nReply-Text: ${text}\n\n`);
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      let end: number;
      while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
        const text = buffer.slice(0, end);
        buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
        const [command, ...lines] = text.split(/\r?\n/);
        const headers = Object.fromEntries(
          lines.map((line) => [
            line.slice(0, line.indexOf(':')).trim(),
            line.slice(line.indexOf(':') + 1).trim(),
          ]),
        );
        this.commands.push({ command, headers });
        if (command.startsWith('auth ')) {
          authed = command.slice('auth '.length) === this.password;
          reply(authed ? '+OK accepted' : '-ERR invalid');
          if (!authed) socket.end();
        } else if (!authed) {
          reply('-ERR command not found');
        } else if (command.startsWith('bgapi ')) {
          const job = headers['Job-UUID'] ?? randomUUID();
          reply(`+OK Job-UUID: ${job}`);
          setTimeout(() => {
            const body = `+OK ${randomUUID()}\n`;
            const event = `Event-Name: BACKGROUND_JOB\nJob-UUID: ${job}\nContent-Length: ${Buffer.byteLength(body)}\n\n${body}`;
            if (socket.writable) {
              socket.write(
                `Content-Length: ${Buffer.byteLength(event)}\nContent-Type: text/event-plain\n\n${event}`,
              );
            }
          }, 20);
        } else if (command === 'exit') {
          reply('+OK bye');
          socket.end();
        } else {
          reply('-ERR command not found');
        }
      }
    });
  }
}
