import { OAuthCredentials } from '../auth/oauth-credentials';
import { WebhookCredentials } from '../auth/webhook-credentials';
import { PortalClient } from '../portal/portal-client';
import { createPortalClient } from '../portal/portal-client-factory';
import { PortalCredentials } from '../portal/portal-credentials';
import { BridgeMetrics } from '../metrics/bridge-metrics';
import { SharedBucketStore } from '../store/coordination-store';
import { TokenStore } from '../store/token-store';
import { PortalScopedSettings } from './portal-scoped-settings';

/** A portal's credentials and client (its request budget, its operating time). */
export interface PortalAccess {
  credentials: PortalCredentials;
  oauth?: OAuthCredentials;
  client: PortalClient;
}

/** Builds how a portal is reached from its settings: its credentials and its client with its own budget. */
export function portalAccess(
  portalId: string,
  scoped: PortalScopedSettings,
  deps: { tokens: TokenStore; metrics: BridgeMetrics; bucket: SharedBucketStore | null },
): PortalAccess {
  const label = scoped.metricsLabel;
  let credentials: PortalCredentials;
  let oauth: OAuthCredentials | undefined;
  if ('oauth' in scoped.access) {
    oauth = new OAuthCredentials(scoped.access.oauth, deps.tokens);
    oauth.onRefresh = (outcome) => deps.metrics.tokenRefreshes.inc({ portal: label, outcome });
    credentials = oauth;
  } else {
    credentials = new WebhookCredentials(scoped.access.webhookUrl, scoped.portal.apiVersion, portalId);
  }
  const client = createPortalClient({
    credentials,
    settings: scoped.portal,
    portalId,
    metrics: deps.metrics,
    shared: deps.bucket,
    metricsPortal: label,
  });
  return { credentials, oauth, client };
}
