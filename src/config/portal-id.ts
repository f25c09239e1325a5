/**
 * Injection token of the portal's id: the key the store keeps this portal's calls, tokens and leases under.
 * Derived once from the configuration (PORTAL_ID, else the portal's host name) by `portalIdOf`.
 */
export const PORTAL_ID = Symbol('PORTAL_ID');

/** What a portal id may be (PORTAL_ID, and with many portals a `member_id` named in a path or query). */
export const PORTAL_ID_PATTERN = /^[\w.:-]{1,100}$/;

/** What `portalIdOf` needs of the configuration. */
export interface PortalIdSource {
  PORTAL_ID?: string;
  B24_WEBHOOK_URL?: string;
  B24_PORTAL_URL?: string;
  readonly authMode: 'webhook' | 'oauth';
}

/** PORTAL_ID when set, else the host name of the portal the auth mode talks to, else "sandbox". */
export function portalIdOf(config: PortalIdSource): string {
  if (config.PORTAL_ID) return config.PORTAL_ID;
  const url = config.authMode === 'oauth' ? config.B24_PORTAL_URL : config.B24_WEBHOOK_URL;
  return url ? new URL(url).hostname : 'sandbox';
}
