import { AppConfig } from '../config/app-config';

/** What OAuth application mode needs from the configuration (SPEC.md §3); holds the client secret. */
export interface OAuthSettings {
  /** `PORTAL_ID`, else the host name of `B24_PORTAL_URL`. */
  portalId: string;
  /** Origin of `B24_PORTAL_URL`: the only portal the bridge calls or accepts posts from. */
  portalUrl: string;
  /** Origin of `/oauth/token/`: `B24_OAUTH_URL`, else the portal. */
  oauthUrl: string;
  clientId: string;
  clientSecret: string;
  /** `PUBLIC_URL` without a trailing slash: the bridge as the portal and browsers reach it. */
  publicUrl?: string;
  apiVersion?: 'v1';
  stateTtlMs: number;
  /** Per-request timeout towards the portal and its token endpoint. */
  timeoutMs: number;
}

export function oauthSettings(config: AppConfig): OAuthSettings {
  const { B24_PORTAL_URL: portalUrl, B24_CLIENT_ID: clientId, B24_CLIENT_SECRET: clientSecret } = config;
  if (!portalUrl) throw new Error('B24_PORTAL_URL: required when B24_AUTH_MODE=oauth');
  if (!clientId) throw new Error('B24_CLIENT_ID: required when B24_AUTH_MODE=oauth');
  if (!clientSecret) throw new Error('B24_CLIENT_SECRET: required when B24_AUTH_MODE=oauth');
  const portal = new URL(portalUrl);
  return {
    portalId: config.PORTAL_ID ?? portal.hostname,
    portalUrl: portal.origin,
    oauthUrl: new URL(config.B24_OAUTH_URL ?? portalUrl).origin,
    clientId,
    clientSecret,
    publicUrl: config.PUBLIC_URL?.replace(/\/+$/, ''),
    apiVersion: config.B24_API_VERSION,
    stateTtlMs: config.OAUTH_STATE_TTL_SEC * 1000,
    timeoutMs: config.B24_TIMEOUT_MS,
  };
}

/** Where an operator starts the code flow, for log lines and health details. */
export function startUrlOf(settings: OAuthSettings): string {
  return `${settings.publicUrl ?? ''}/oauth/start`;
}

/** The application's install handler, as it is registered on the portal. */
export function installUrlOf(settings: OAuthSettings): string {
  return `${settings.publicUrl ?? ''}/oauth/install`;
}
