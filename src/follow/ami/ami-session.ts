import { randomUUID } from 'node:crypto';
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
import { AmiFramer, AmiMessage } from './ami-message';

/** Where the Manager Interface is: `tcp://user:secret@host:5038` or `tls://user:secret@host:5039`. */
export type AmiTarget = PbxTarget;

export function parseAmiTarget(
  url: string,
  egress: EgressPolicy,
  variable = 'AMI_URL',
): AmiTarget | { problem: string } {
  return parsePbxTarget(url, egress, { url: 'AMI_URL', variable });
}

export function amiTargetOf(url: string, egress: EgressPolicy, variable = 'AMI_URL'): AmiTarget {
  return checkedTarget(parseAmiTarget(url, egress, variable));
}

/** An AMI failure whose message names the address and never the secret. */
export class AmiError extends ConnectorError {}

export type AmiSessionOptions = PbxSessionOptions<AmiMessage>;

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
 * an event.
 */
export class AmiSession extends PbxSession<AmiMessage> {
  private readonly waiting = new Map<string, Waiting>();

  /** Connects and logs in; rejects with an AmiError (address, reason; never the secret). */
  static async open(target: AmiTarget, options: AmiSessionOptions): Promise<AmiSession> {
    const session = new AmiSession(pbxLabel(target), options);
    const framer = new AmiFramer(
      (line) => session.greeted?.(line),
      (message) => session.received(message),
    );
    const onData = (chunk: Buffer | string) => {
      framer.push(chunk as string);
      options.onRead?.();
    };
    await session.connect(target, 'Manager banner', onData, 'utf8');
    return session;
  }

  protected async login(target: AmiTarget, banner: string): Promise<void> {
    if (!/^Asterisk Call Manager\//i.test(banner)) {
      throw new AmiError(`${this.label} is not an Asterisk Manager Interface`);
    }
    const login = await this.action('Login', [
      ['Username', target.user],
      ['Secret', target.password],
      ['Events', 'on'],
    ]);
    if (!/^success$/i.test(login.Response ?? '')) {
      throw new AmiError(
        `login refused for user ${oneLine(target.user)} at ${this.label}: ${oneLine(login.Message ?? 'no reason given')}`,
        { credentialsRefused: true },
      );
    }
  }

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

  ping(): Promise<AmiMessage> {
    return this.action('Ping');
  }

  protected goodbye(): Promise<AmiMessage> {
    return this.action('Logoff');
  }

  protected goodbyeText(): string {
    return `Action: Logoff\r\nActionID: ${randomUUID()}\r\n\r\n`;
  }

  protected failure(message: string, details?: FailureDetails): AmiError {
    return new AmiError(message, details);
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

  protected abandon(error: AmiError): void {
    for (const waiting of this.waiting.values()) {
      clearTimeout(waiting.timer);
      waiting.reject(error);
    }
    this.waiting.clear();
  }
}
