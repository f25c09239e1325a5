/**
 * A setting that names a server and its credentials in one URL (`AMI_URL`, `ESL_URL`, `ASTERISK_CDR_URL`):
 * `scheme://user:password@host:port/path?query`. Read by hand, not by WHATWG `URL`: generated passwords hold
 * `/`, `#`, `?`, `@` or `%`, which `URL` reads as the path, fragment or query (or refuses, with an error that
 * quotes the whole input, password included). Here the password is everything between the first `:` of the
 * user part and the last `@` before the host, written plainly or percent-encoded (a `%XX` that is valid
 * UTF-8 is decoded; any other `%` stays as it is). A problem names the variable and the rule, never a value.
 */
export interface CredentialUrl {
  scheme: string;
  user: string;
  password: string;
  /** The host as written, without brackets for IPv6 (`::1`), lower case. */
  host: string;
  /** Undefined when the URL names none (the caller's protocol default applies). */
  port?: number;
  /** After the host: `/asteriskcdrdb`, or empty. */
  path: string;
  query: URLSearchParams;
}

/** Letters, digits, `-`, `.`: a DNS name or an IPv4 literal; or a bracketed IPv6 literal. */
const HOST = /^(?:\[([0-9a-f:.]+)\]|([a-z0-9](?:[a-z0-9.-]*[a-z0-9])?))(?::(\d{1,5}))?$/i;

export function parseCredentialUrl(
  value: string,
  variable: string,
  schemes: readonly string[],
  shape: string,
): CredentialUrl | { problem: string } {
  const refused = (why: string) => ({ problem: `${variable} must be ${shape} (this one ${why})` });
  if (/[\s]/.test(value)) return refused('must not contain spaces or line breaks');
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(value)?.[1]?.toLowerCase();
  if (!scheme || !schemes.includes(scheme)) {
    return refused(`must start with ${schemes.map((name) => `${name}://`).join(' or ')}`);
  }
  const rest = value.slice(scheme.length + 3);
  const at = rest.lastIndexOf('@');
  if (at < 0) return refused('names no user and password (user:password@host)');
  const userInfo = rest.slice(0, at);
  const after = rest.slice(at + 1);
  const hostEnd = after.search(/[/?]/);
  const hostPart = hostEnd < 0 ? after : after.slice(0, hostEnd);
  const tail = hostEnd < 0 ? '' : after.slice(hostEnd);
  const colon = userInfo.indexOf(':');
  if (colon < 0) return refused('names no password (user:password@host)');
  const user = decodePercent(userInfo.slice(0, colon));
  const password = decodePercent(userInfo.slice(colon + 1));
  if (!password) return refused('has an empty password');
  const host = HOST.exec(hostPart);
  if (!host) return refused('has no valid host (a name, an IPv4 address or [an IPv6 address])');
  const port = host[3] === undefined ? undefined : Number(host[3]);
  if (port !== undefined && (port < 1 || port > 65_535)) return refused('has a port outside 1-65535');
  const queryAt = tail.indexOf('?');
  const path = queryAt < 0 ? tail : tail.slice(0, queryAt);
  const query = new URLSearchParams(queryAt < 0 ? '' : tail.slice(queryAt + 1));
  return { scheme, user, password, host: (host[1] ?? host[2]).toLowerCase(), port, path, query };
}

/** The schemes and shape of each setting that is a URL with credentials in it (a secret: never echoed). */
export const CREDENTIAL_URLS = {
  AMI_URL: { schemes: ['tcp', 'tls'], shape: 'tcp://user:secret@host:5038 or tls://user:secret@host:5039' },
  ESL_URL: { schemes: ['tcp', 'tls'], shape: 'tcp://:password@host:8021 or tls://:password@host:8021' },
  ASTERISK_CDR_URL: {
    // `mysqls://` is `mysql://…?ssl=true`: TLS before the login.
    schemes: ['mysql', 'mysqls'],
    shape: 'mysql://user:password@host:3306/asteriskcdrdb (mysqls:// or ?ssl=true for TLS)',
  },
} as const;

export type CredentialVariable = keyof typeof CREDENTIAL_URLS;

/**
 * One of CREDENTIAL_URLS read with its own rules (AMI names a user, the CDR URL a database, the others no
 * path): what start-up validation, the portal settings' checks and every connector use, so what starts is
 * what connects. `name` is how a problem names the setting (`follow.AMI_URL`); problems never hold a value.
 */
export function readCredentialUrl(
  value: string,
  variable: CredentialVariable,
  name: string = variable,
): CredentialUrl | { problem: string } {
  const { schemes, shape } = CREDENTIAL_URLS[variable];
  const parsed = parseCredentialUrl(value, name, schemes, shape);
  if ('problem' in parsed) return parsed;
  const refused = (why: string) => ({ problem: `${name} must be ${shape} (this one ${why})` });
  if (variable === 'ASTERISK_CDR_URL') {
    if (!/^\/[\w$-]+$/.test(parsed.path)) return refused('names no database');
  } else if (parsed.path !== '' && parsed.path !== '/') return refused('has a path after the host');
  if (variable === 'AMI_URL' && !parsed.user) return refused('names no user');
  return parsed;
}

/** readCredentialUrl for a value validated at start-up: a problem throws (naming the variable only). */
export function credentialUrlOf(value: string, variable: CredentialVariable): CredentialUrl {
  const parsed = readCredentialUrl(value, variable);
  if ('problem' in parsed) throw new Error(parsed.problem);
  return parsed;
}

/** `scheme://host[:port]` of a credential URL, for views and labels (no credential), or '' when unreadable. */
export function credentialUrlAddress(value: string | undefined, variable: CredentialVariable): string {
  const parsed = value ? readCredentialUrl(value, variable) : undefined;
  if (!parsed || 'problem' in parsed) return '';
  const host = parsed.host.includes(':') ? `[${parsed.host}]` : parsed.host;
  return `${parsed.scheme}://${host}${parsed.port === undefined ? '' : `:${parsed.port}`}`;
}

/** `host:port` for labels, IPv6 in brackets. */
export function hostPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Each run of `%XX` decoded when it is valid UTF-8; anything else kept as written. */
function decodePercent(text: string): string {
  return text.replace(/(?:%[0-9a-f]{2})+/gi, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
}
