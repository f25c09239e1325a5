import { Socket } from 'node:net';
import { readCredentialUrl } from '../common/credential-url';
import { Destination, EgressPolicy } from '../common/egress';

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
  setting: { url: 'AMI_URL' | 'ESL_URL'; variable: string; port: (tls: boolean) => number },
): PbxTarget | { problem: string } {
  const { variable } = setting;
  const parsed = readCredentialUrl(url, setting.url, variable);
  if ('problem' in parsed) return parsed;
  const tls = parsed.scheme === 'tls';
  const port = parsed.port ?? setting.port(tls);
  const destination = egress.destination({ variable, host: parsed.host, port, tls, credentials: true });
  if ('problem' in destination) return destination;
  return { destination, tls, user: parsed.user, password: parsed.password };
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

export interface PbxSocketOptions {
  label: string;
  rejectUnauthorized?: boolean;
  /** One read; a throw (a message past the framer's bound) ends the session. */
  onData: (chunk: Buffer | string) => void;
  /** Ends the session (once) with a failure naming the address, never the secret. */
  end: (message: string, details?: { code?: string }) => void;
}

/** Connects through the egress gate: the name is resolved and checked at every connection (SPEC §8). */
export function connectPbx(target: PbxTarget, options: PbxSocketOptions): Socket {
  const { label, end } = options;
  const socket: Socket = target.tls
    ? target.destination.connectTls({ rejectUnauthorized: options.rejectUnauthorized ?? true })
    : target.destination.connect();
  socket.setKeepAlive(true, 10_000);
  socket.on('data', (chunk: Buffer | string) => {
    try {
      options.onData(chunk);
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
  return socket;
}

export function oneLine(value: string): string {
  return value.replace(/[\r\n]+/g, ' ');
}
