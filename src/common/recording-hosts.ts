/**
 * RECORDING_FETCH_HOSTS (docs/API.md): which URLs the bridge may download recordings from. A pattern is
 * `host` (any port), `host:port` (that port only) or `*.suffix` (any subdomain of suffix, not suffix itself);
 * names compare case-insensitively, http(s) only. Depends on nothing of the project.
 */
export class RecordingHosts {
  private readonly patterns: { host: string; port?: string; wildcard: boolean }[];

  constructor(patterns: readonly string[]) {
    this.patterns = patterns.map((pattern) => {
      const lower = pattern.trim().toLowerCase();
      const wildcard = lower.startsWith('*.');
      const rest = wildcard ? lower.slice(2) : lower;
      const colon = rest.lastIndexOf(':');
      return colon > 0
        ? { host: rest.slice(0, colon), port: rest.slice(colon + 1), wildcard }
        : { host: rest, wildcard };
    });
  }

  get empty(): boolean {
    return this.patterns.length === 0;
  }

  /** Whether `url` is http(s) on an allowed host (and port). */
  allows(url: string | URL): boolean {
    let parsed: URL;
    try {
      parsed = typeof url === 'string' ? new URL(url) : url;
    } catch {
      return false;
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return false;
    if (parsed.username || parsed.password) return false;
    const host = parsed.hostname
      .toLowerCase()
      .replace(/^\[|\]$/g, '')
      .replace(/\.$/, '');
    const port = parsed.port || (parsed.protocol === 'https:' ? '443' : '80');
    return this.patterns.some((pattern) => {
      if (pattern.port !== undefined && pattern.port !== port) return false;
      return pattern.wildcard ? host.endsWith(`.${pattern.host}`) : host === pattern.host;
    });
  }
}
