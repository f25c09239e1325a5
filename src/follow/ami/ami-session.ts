import { randomUUID } from 'node:crypto';
import { Socket } from 'node:net';
import { ConnectorError, EgressPolicy } from '../../common/egress';
import { checkedTarget, connectPbx, oneLine, parsePbxTarget, pbxLabel, PbxTarget } from '../pbx-connection';
import { AmiFramer, AmiMessage } from './ami-message';

/** Where the Manager Interface is: `tcp://user:secret@host:5038` or `tls://user:secret@host:5039`. */
export type AmiTarget = PbxTarget;

export function parseAmiTarget(
  url: string,
  egress: EgressPolicy,
  variable = 'AMI_URL',
): AmiTarget | { problem: string } {
  return parsePbxTarget(url, egress, { url: 'AMI_URL', variable, port: (tls) => (tls ? 5039 : 5038) });
}

export function amiTargetOf(url: string, egress: EgressPolicy, variable = 'AMI_URL'): AmiTarget {
  return checkedTarget(parseAmiTarget(url, egress, variable));
}

export const amiLabel = pbxLabel;

/** An AMI failure whose message names the address and never the secret. */
export class AmiError extends ConnectorError {}

export interface AmiSessionOptions {
  /** Each wait (connect, banner, an action's response) is bounded by this. */
  timeoutMs: number;
  /** Every event (messages without `Response`), in order. */
  onEvent: (event: AmiMessage) => void;
  /** After every read of the socket: the events of one read have all been handed to onEvent. */
  onRead?: () => void;
  /** Once, when the session ends for any reason. */
  onClose: (error: AmiError) => void;
  /** Checks the TLS certificate (default true; tests against a self-signed double may turn it off). */
  rejectUnauthorized?: boolean;
}

interface Waiting {
  resolve: (message: AmiMessage) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
  /** List actions: the events carrying this ActionID, until the `EventList: Complete` one. */
  items?: AmiMessage[];
  listDone?: (items: AmiMessage[]) => void;
}

/**
 * One long-lived Manager session: the banner, `Login` with `Events: on`, actions answered by ActionID, list
 * actions (`CoreShowChannels`) collected until their `…Complete` event, and every other message handed on as
 * an event. Any socket error, a message past the framer's bound, or an action unanswered within `timeoutMs`
 * ends the session (onClose, once); the caller reconnects.
 */
export class AmiSession {
  private readonly waiting = new Map<string, Waiting>();
  private closed = false;

  private socket: Socket;

  private constructor(
    private readonly label: string,
    private readonly options: AmiSessionOptions,
  ) {}

  /** Connects and logs in; rejects with an AmiError (address, reason; never the secret). */
  static open(target: AmiTarget, options: AmiSessionOptions): Promise<AmiSession> {
    const label = amiLabel(target);
    return new Promise((resolve, reject) => {
      const session = new AmiSession(label, options);
      let banner: (line: string) => void = () => undefined;
      const greeted = new Promise<string>((done) => (banner = done));
      const framer = new AmiFramer(
        (line) => banner(line),
        (message) => session.received(message),
      );
      const timer = setTimeout(
        () => session.end(new AmiError(`no Manager banner from ${label} within ${options.timeoutMs} ms`)),
        options.timeoutMs,
      );
      session.socket = connectPbx(target, {
        label,
        rejectUnauthorized: options.rejectUnauthorized,
        onData: (chunk) => {
          framer.push(chunk as string);
          options.onRead?.();
        },
        end: (message, details) => session.end(new AmiError(message, details)),
      });
      session.socket.setEncoding('utf8');
      session.closedWith = (error: Error) => {
        clearTimeout(timer);
        reject(error);
      };
      void greeted.then(async (line) => {
        clearTimeout(timer);
        if (!/^Asterisk Call Manager\//i.test(line)) {
          session.end(new AmiError(`${label} is not an Asterisk Manager Interface`));
          return;
        }
        try {
          const login = await session.action('Login', [
            ['Username', target.user],
            ['Secret', target.password],
            ['Events', 'on'],
          ]);
          if (!/^success$/i.test(login.Response ?? '')) {
            session.end(
              new AmiError(
                `login refused for user ${oneLine(target.user)} at ${label}: ${oneLine(login.Message ?? 'no reason given')}`,
                { credentialsRefused: true },
              ),
            );
            return;
          }
          session.established = true;
          resolve(session);
        } catch (error) {
          session.end(error as AmiError);
        }
      });
    });
  }

  /** Before the login is accepted a failure rejects `open`; after it, onClose tells the follower. */
  private closedWith?: (error: Error) => void;
  private established = false;

  /** Sends one action; resolves with its response (`Response: Success|Error`). */
  action(name: string, fields: [string, string][] = []): Promise<AmiMessage> {
    return this.send(name, fields);
  }

  /** A list action: resolves with its events once `EventList: Complete` arrives. */
  list(name: string, fields: [string, string][] = []): Promise<AmiMessage[]> {
    return new Promise((resolve, reject) => {
      this.send(name, fields, resolve).then((response) => {
        if (!/^success$/i.test(response.Response ?? '')) {
          reject(new AmiError(`${name} refused by ${this.label}: ${oneLine(response.Message ?? '')}`));
        }
      }, reject);
    });
  }

  /**
   * Logs off and reads on until the PBX says `Goodbye` (or timeoutMs): every event it sent before it read
   * the Logoff has been handed on by then. How a stopping bridge leaves without losing what is in flight.
   */
  async logoff(): Promise<void> {
    if (this.closed) return;
    await this.action('Logoff').catch(() => undefined);
    this.end(new AmiError(`closed by the bridge (${this.label})`));
  }

  /** Logs off and closes. */
  close(): void {
    if (this.closed) return;
    if (this.socket.writable) this.socket.write(`Action: Logoff\r\nActionID: ${randomUUID()}\r\n\r\n`);
    this.end(new AmiError(`closed by the bridge (${this.label})`));
  }

  private send(
    name: string,
    fields: [string, string][],
    listDone?: (items: AmiMessage[]) => void,
  ): Promise<AmiMessage> {
    if (this.closed) return Promise.reject(new AmiError(`${this.label} is not connected`));
    const id = randomUUID();
    const lines = [`Action: ${name}`, `ActionID: ${id}`, ...fields.map(([k, v]) => `${k}: ${oneLine(v)}`)];
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.end(new AmiError(`${name} unanswered by ${this.label} within ${this.options.timeoutMs} ms`));
      }, this.options.timeoutMs);
      this.waiting.set(id, { resolve, reject, timer, items: listDone ? [] : undefined, listDone });
      this.socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    });
  }

  private received(message: AmiMessage): void {
    const id = message.ActionID;
    const waiting = id ? this.waiting.get(id) : undefined;
    if (waiting && 'Response' in message) {
      if (!waiting.listDone || !/^success$/i.test(message.Response)) {
        clearTimeout(waiting.timer);
        this.waiting.delete(id as string);
      }
      waiting.resolve(message);
      return;
    }
    if (waiting?.items && message.Event) {
      if (/^complete$/i.test(message.EventList ?? '')) {
        clearTimeout(waiting.timer);
        this.waiting.delete(id as string);
        waiting.listDone?.(waiting.items);
      } else if (waiting.items.length < 100_000) {
        waiting.items.push(message);
      }
      return;
    }
    if (message.Event) this.options.onEvent(message);
  }

  private end(error: AmiError): void {
    if (this.closed) return;
    this.closed = true;
    for (const waiting of this.waiting.values()) {
      clearTimeout(waiting.timer);
      waiting.reject(error);
    }
    this.waiting.clear();
    this.socket.destroy();
    if (this.established) this.options.onClose(error);
    else this.closedWith?.(error);
  }
}
