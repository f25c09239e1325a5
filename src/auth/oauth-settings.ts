import { AuthSettings, PortalSettings } from '../config/settings';

/** What OAuth application mode needs from the configuration (docs/API.md); holds the client secret. */
export interface OAuthSettings {
  /** `PORTAL_ID`, else the host name of `B24_PORTAL_URL` (`portalIdOf`, as the PORTAL_ID provider). */
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

/** `portalId` is the PORTAL_ID provider's value (`portalIdOf`), so OAuth keys its tokens as the rest does. */
export function oauthSettings(auth: AuthSettings, portal: PortalSettings, portalId: string): OAuthSettings {
  const { portalUrl, clientId, clientSecret } = auth;
  if (!portalUrl) throw new Error('B24_PORTAL_URL: required when B24_AUTH_MODE=oauth');
  if (!clientId) throw new Error('B24_CLIENT_ID: required when B24_AUTH_MODE=oauth');
  if (!clientSecret) throw new Error('B24_CLIENT_SECRET: required when B24_AUTH_MODE=oauth');
  return {
    portalId,
    portalUrl: new URL(portalUrl).origin,
    oauthUrl: new URL(auth.oauthUrl ?? portalUrl).origin,
    clientId,
    clientSecret,
    publicUrl: auth.publicUrl?.replace(/\/+$/, ''),
    apiVersion: portal.apiVersion,
    stateTtlMs: auth.stateTtlMs,
    timeoutMs: portal.timeoutMs,
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
