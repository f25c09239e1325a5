/**
 * The configured portal (`B24_PORTAL_URL`) and the REST addresses derived from it. Domains and endpoints
 * named in a post or a token answer are only ever compared with it, never called on their own: a forged
 * post must not make the bridge send a token anywhere else.
 */
export class PortalAddress {
  private readonly portal: URL;

  constructor(
    portalUrl: string,
    private readonly apiVersion?: 'v1',
  ) {
    this.portal = new URL(portalUrl);
  }

  /** The portal's domain as the portal itself names it. */
  get domain(): string {
    return this.portal.host;
  }

  /** A portal domain as the portal names it (`portal.example.com`, with the port when it has one). */
  isThisPortal(domain: string): boolean {
    return domain.trim().toLowerCase() === this.portal.host.toLowerCase();
  }

  isThisPortalEndpoint(endpoint: string): boolean {
    const url = parseUrl(endpoint);
    return url !== undefined && ['http:', 'https:'].includes(url.protocol) && this.isThisPortal(url.host);
  }

  /**
   * `{base}/rest/{method}`, or `{base}/rest/v1/{method}` with B24_API_VERSION=v1. The base is the stored
   * client endpoint when it is this portal's, else the configured portal; `movedTo` is where the portal
   * said it moved.
   */
  restUrl(method: string, clientEndpoint?: string, movedTo?: string): string {
    const endpoint =
      clientEndpoint && this.isThisPortalEndpoint(clientEndpoint) ? new URL(clientEndpoint) : undefined;
    const pathname = endpoint ? endpoint.pathname.replace(/\/?$/, '/') : '/rest/';
    const base = new URL(pathname, movedTo ?? endpoint?.origin ?? this.portal.origin);
    return new URL(this.apiVersion ? `v1/${method}` : method, base).toString();
  }
}

function parseUrl(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}
