/**
 * Which moves (HTTP 3xx) of the portal the client follows. The next request carries the webhook code in
 * its path or the OAuth token in a header, so a move may never downgrade https to http, and may leave the
 * portal's host only for a host of the same registrable domain (a renamed cloud portal:
 * `old.bitrix24.de` → `new.bitrix24.de`) or one `B24_ALLOWED_DOMAINS` names.
 */

/** Second-level labels that, under a two-letter country code, form a public suffix (`co.uk`, `com.br`). */
const PUBLIC_SECOND_LEVELS = new Set(['ac', 'co', 'com', 'edu', 'gov', 'ne', 'net', 'or', 'org']);

export type RedirectVerdict = { follow: true } | { follow: false; reason: string };

export class RedirectPolicy {
  private readonly exactHosts: Set<string>;
  private readonly suffixes: string[];

  /** `allowedDomains`: `*.example.com` (any host under example.com) or an exact host name. */
  constructor(allowedDomains: readonly string[] = []) {
    const patterns = allowedDomains.map((pattern) => pattern.trim().toLowerCase()).filter(Boolean);
    this.exactHosts = new Set(patterns.filter((pattern) => !pattern.startsWith('*.')));
    this.suffixes = patterns.filter((pattern) => pattern.startsWith('*.')).map((pattern) => pattern.slice(1));
  }

  judge(from: URL, to: URL): RedirectVerdict {
    if (to.protocol !== 'https:' && to.protocol !== 'http:') {
      return { follow: false, reason: `the new address is not http(s) (${to.protocol})` };
    }
    if (from.protocol === 'https:' && to.protocol !== 'https:') {
      return { follow: false, reason: 'it would downgrade https to http' };
    }
    const fromHost = from.hostname.toLowerCase();
    const toHost = to.hostname.toLowerCase();
    if (toHost === fromHost || registrableDomain(toHost) === registrableDomain(fromHost)) {
      return { follow: true };
    }
    if (this.exactHosts.has(toHost) || this.suffixes.some((suffix) => toHost.endsWith(suffix))) {
      return { follow: true };
    }
    return {
      follow: false,
      reason: `${toHost} is outside ${registrableDomain(fromHost)} and not in B24_ALLOWED_DOMAINS`,
    };
  }
}

/**
 * The domain a host belongs to: its last two labels, or three under a common two-level public suffix
 * (`portal.example.co.uk` → `example.co.uk`). An IP address is its own domain.
 */
export function registrableDomain(host: string): string {
  const name = host.toLowerCase().replace(/\.$/, '');
  if (/^[\d.]+$/.test(name) || name.includes(':') || name.startsWith('[')) return name;
  const labels = name.split('.');
  const [second, top] = labels.slice(-2);
  const keep = labels.length > 2 && top?.length === 2 && PUBLIC_SECOND_LEVELS.has(second) ? 3 : 2;
  return labels.slice(-keep).join('.');
}

/** Whether `host` is one `patterns` name: an exact host, or under a `*.example.com` pattern. */
export function domainAllowed(host: string, patterns: readonly string[]): boolean {
  const name = host.trim().toLowerCase().replace(/:\d+$/, '');
  return patterns.some((raw) => {
    const pattern = raw.trim().toLowerCase();
    return pattern.startsWith('*.') ? name.endsWith(pattern.slice(1)) : name === pattern;
  });
}
