import { Socket } from 'node:net';
import { readCredentialUrl } from '../common/credential-url';
import { ConnectorError, Destination, EgressPolicy } from '../common/egress';

/** A PBX connection's address (a Destination of the egress policy, the only way to its socket) and login. */
export interface PbxTarget {
  destination: Destination;
  tls: boolean;
  user: string;
  password: string;
}

/**
 * AMI_URL or ESL_URL read by hand (a secret may hold any character: `/`, `#`, `@`, …) and made a Destination
 * by `egress`: the problem names the variable and the rule, never the value.
 */
export function parsePbxTarget(
  url: string,
  egress: EgressPolicy,
  setting: { url: 'AMI_URL' | 'ESL_URL'; variable: string },
): PbxTarget | { problem: string } {
  const { variable } = setting;
  const parsed = readCredentialUrl(url, setting.url, variable);
  if ('problem' in parsed) return parsed;
  const tls = parsed.scheme === 'tls';
  const port = parsed.port ?? defaultPbxPort(setting.url, tls);
  const destination = egress.destination({ variable, host: parsed.host, port, tls, credentials: true });
  if ('problem' in destination) return destination;
  return { destination, tls, user: parsed.user, password: parsed.password };
}

/** The Manager Interface's ports (5038, `tls://` 5039) and the event socket's (8021), for URLs naming none. */
export function defaultPbxPort(url: 'AMI_URL' | 'ESL_URL', tls: boolean): number {
  if (url === 'ESL_URL') return 8021;
  return tls ? 5039 : 5038;
}

/** A parsed target, for a value already checked (the environment's, a stored setting): a problem throws. */
export function checkedTarget<Target>(target: Target | { problem: string }): Target {
  if (typeof target === 'object' && target !== null && 'problem' in target) throw new Error(target.problem);
  return target as Target;
}

/** The address without credentials, for logs and health details. */
export function pbxLabel(target: PbxTarget): string {
  return `${target.tls ? 'tls' : 'tcp'}://${target.destination.label}`;
}

export interface PbxSessionOptions<Event> {
  /** Each wait (connect, the greeting, a reply) is bounded by this. */
  timeoutMs: number;
  /** Every event, in order. */
  onEvent: (event: Event) => void;
  /** After every read of the socket: the events of one read have all been handed to onEvent. */
  onRead?: () => void;
  /** Once, when an established session ends for any reason. */
  onClose: (error: ConnectorError) => void;
  /** tls://: checks the certificate (default true; tests against a self-signed one turn it off). */
  rejectUnauthorized?: boolean;
}

export type FailureDetails = ConstructorParameters<typeof ConnectorError>[1];

/**
 * One long-lived PBX session (AMI, the event socket) over a socket of the egress gate. Before the login is
 * accepted, whatever ends the session rejects its opening; after it, onClose tells the follower. Any socket
 * error, a message past the framer's bound or a request unanswered within timeoutMs ends it, once; the
 * caller reconnects. Failures name the address, never the secret.
 */
export abstract class PbxSession<Event> {
  protected socket!: Socket;
  protected closed = false;
  protected established = false;
  /** The PBX's greeting arrived (AMI's banner line, the event socket's auth/request): the login follows. */
  protected greeted?: (greeting: string) => void;
  private refused?: (error: ConnectorError) => void;

  protected constructor(
    protected readonly label: string,
    protected readonly options: PbxSessionOptions<Event>,
  ) {}

  /** The protocol's failure (AmiError, EslError). */
  protected abstract failure(message: string, details?: FailureDetails): ConnectorError;
  /** Logs in once greeted; a refusal throws (marked credentialsRefused). */
  protected abstract login(target: PbxTarget, greeting: string): Promise<void>;
  /** The goodbye as a request the PBX answers (`Logoff`, `exit`). */
  protected abstract goodbye(): Promise<unknown>;
  /** The goodbye written without waiting for its answer. */
  protected abstract goodbyeText(): string;
  /** Fails every request still waiting for its answer. */
  protected abstract abandon(error: ConnectorError): void;
  /** The keep-alive: a request the PBX answers at once. */
  abstract ping(): Promise<unknown>;

  /**
   * Says goodbye and reads on until the PBX answers it (or timeoutMs): every event it sent before it read
   * the goodbye has been handed on by then. How a stopping bridge leaves without losing what is in flight.
   */
  async leave(): Promise<void> {
    if (this.closed) return;
    await this.goodbye().catch(() => undefined);
    this.end(this.failure(`closed by the bridge (${this.label})`));
  }

  /** Says goodbye and closes. */
  close(): void {
    if (this.closed) return;
    if (this.socket.writable) this.socket.write(this.goodbyeText());
    this.end(this.failure(`closed by the bridge (${this.label})`));
  }

  /**
   * Connects through the egress gate (the name resolved and checked at every connection, SPEC §8); the PBX
   * must greet within timeoutMs (`greeting` names what it did not send), then the login runs. Resolves once
   * the login is accepted. `onData` is one read; a throw (a message past the framer's bound) ends the session.
   */
  protected connect(
    target: PbxTarget,
    greeting: string,
    onData: (chunk: Buffer | string) => void,
    encoding?: BufferEncoding,
  ): Promise<void> {
    const { label, options } = this;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => this.end(this.failure(`no ${greeting} from ${label} within ${options.timeoutMs} ms`)),
        options.timeoutMs,
      );
      this.refused = (error) => {
        clearTimeout(timer);
        reject(error);
      };
      this.greeted = (line) => {
        clearTimeout(timer);
        this.greeted = undefined;
        this.login(target, line).then(
          () => {
            this.established = true;
            this.refused = undefined;
            resolve();
          },
          (error: ConnectorError) => this.end(error),
        );
      };
      const end = (message: string, details?: FailureDetails) => this.end(this.failure(message, details));
      const socket: Socket = target.tls
        ? target.destination.connectTls({ rejectUnauthorized: options.rejectUnauthorized ?? true })
        : target.destination.connect();
      this.socket = socket;
      if (encoding) socket.setEncoding(encoding);
      socket.setKeepAlive(true, 10_000);
      socket.on('data', (chunk: Buffer | string) => {
        try {
          onData(chunk);
        } catch (error) {
          end(`${(error as Error).message} from ${label}`);
        }
      });
      socket.on('error', (error: NodeJS.ErrnoException) =>
        end(
          error.code === 'EGRESS_REFUSED'
            ? `${label} is not allowed: ${error.message}`
            : `${error.code ?? error.message} ${label}`,
          { code: error.code },
        ),
      );
      socket.on('close', () => end(`${label} closed the connection`));
    });
  }

  protected end(error: ConnectorError): void {
    if (this.closed) return;
    this.closed = true;
    this.abandon(error);
    this.socket.destroy();
    if (this.established) this.options.onClose(error);
    else this.refused?.(error);
  }
}

export function oneLine(value: string): string {
  return value.replace(/[\r\n]+/g, ' ');
}
