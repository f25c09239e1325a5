import { CredentialUrl, credentialUrlOf } from '../common/credential-url';
import { Destination, EgressPolicy, EgressRefused } from '../common/egress';
import { DialSettings } from '../config/settings';
import { defaultPbxPort } from '../follow/pbx-connection';

/** A destination, or why the egress rule refuses it (names the variable, the host and the rule, never a secret). */
export type Checked = Destination | { problem: string };

/** A PBX's text protocol server (AMI, the event socket), read from its credential URL by hand. */
export interface LineServer {
  variable: 'AMI_URL' | 'ESL_URL';
  url: CredentialUrl;
  /** `tls://`: TLS from the first byte (Asterisk's tlsbindport; an event socket behind a TLS terminator). */
  tls: boolean;
  port: number;
  /** What health and errors show: `tls://pbx.example.com:5039`, never credentials. */
  label: string;
  destination: Checked;
}

/**
 * AMI_URL or ESL_URL as a dialer connects to it: parsed by `credentialUrlOf` (any character in the
 * password; a problem names the variable, never the value), then made a destination under `egress`
 * (credentials cross it: a tenant's need TLS unless the operator allowed that literal address).
 */
export function lineServerOf(
  variable: 'AMI_URL' | 'ESL_URL',
  value: string,
  egress: EgressPolicy,
): LineServer {
  const url = credentialUrlOf(value, variable);
  const tls = url.scheme === 'tls';
  const port = url.port ?? defaultPbxPort(variable, tls);
  const destination = egress.destination({ variable, host: url.host, port, tls, credentials: true });
  const host = url.host.includes(':') ? `[${url.host}]` : url.host;
  return { variable, url, tls, port, label: `${url.scheme}://${host}:${port}`, destination };
}

/** DIAL_URL's scheme, host and port, read from the template before any click fills it. */
export interface HttpServer {
  tls: boolean;
  /** `https://pbx.example.com` (host and port as written), never a path or query. */
  label: string;
  destination: Checked;
}

/**
 * DIAL_URL as a destination. Under a tenant rule its host must be written out (a `{placeholder}` there would
 * let each click pick its own host: nothing to check at save), and every click's request carries the
 * clicked number and DIAL_AUTH, so it counts as credentials: https:// only, or http:// to an address the
 * operator allowed (TENANT_ALLOWED_NETWORKS).
 */
export function httpServerOf(template: string, egress: EgressPolicy): HttpServer {
  const authority = /^(https?):\/\/([^/?#]*)/i.exec(template);
  const url = new URL(template.replace(/\{\w+\}/g, 'x'));
  const tls = url.protocol === 'https:';
  const label = `${url.protocol}//${url.host}`;
  if (egress.restricted && authority && /[{}]/.test(authority[2])) {
    return {
      tls,
      label,
      destination: {
        problem:
          'DIAL_URL: its host may not hold a {placeholder} here (each click would choose where it goes); write the host out',
      },
    };
  }
  const port = url.port ? Number(url.port) : tls ? 443 : 80;
  const destination = egress.destination({
    variable: 'DIAL_URL',
    host: url.hostname,
    port,
    tls,
    credentials: true,
  });
  return { tls, label, destination };
}

/** The one destination the dial settings name (undefined: click-to-call is off). */
export function dialDestinationOf(settings: DialSettings, egress: EgressPolicy): Checked | undefined {
  switch (settings.mode) {
    case 'ami':
      return lineServerOf('AMI_URL', settings.amiUrl ?? '', egress).destination;
    case 'esl':
      return lineServerOf('ESL_URL', settings.eslUrl ?? '', egress).destination;
    case 'http':
      return httpServerOf(settings.url ?? '', egress).destination;
    default:
      return undefined;
  }
}

/**
 * The refusal a connection met, named for the dial setting: which variable, which host, and the rule; a
 * refusal already named (a checked destination's problem) is kept as it is.
 */
export function refusedFor(variable: string, error: EgressRefused): EgressRefused {
  if (error.message.startsWith(`${variable}:`)) return error;
  return new EgressRefused(
    `${variable}: ${error.message} (loopback, link-local, private and shared ranges are refused unless TENANT_ALLOWED_NETWORKS allows them)`,
  );
}

/** The destination, or the refusal it is (thrown as an EgressRefused: a permanent failure of the click). */
export function reachable(checked: Checked): Destination {
  if ('problem' in checked) throw new EgressRefused(checked.problem);
  return checked;
}
