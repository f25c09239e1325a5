import { Global, Module } from '@nestjs/common';
import { PORTAL_ID } from '../config/portal-id';
import { AuthSettings, PortalSettings } from '../config/settings';
import { BridgeMetrics } from '../metrics/bridge-metrics';
import { PortalCredentials } from '../portal/portal-credentials';
import { TokenStore } from '../store/token-store';
import { OAuthCredentials } from './oauth-credentials';
import { oauthSettings } from './oauth-settings';
import { WebhookCredentials } from './webhook-credentials';

/**
 * The mode comes from configuration: `B24_AUTH_MODE`, inferred when only one kind is configured. Both
 * kinds key the portal by the PORTAL_ID provider's value (`portalIdOf`).
 */
export async function createCredentials(
  auth: AuthSettings,
  portal: PortalSettings,
  tokens: TokenStore,
  portalId: string,
  metrics?: BridgeMetrics,
): Promise<PortalCredentials> {
  if (auth.mode === 'oauth') {
    const credentials = new OAuthCredentials(oauthSettings(auth, portal, portalId), tokens);
    credentials.onRefresh = (outcome) => metrics?.tokenRefreshes.inc({ portal: portalId, outcome });
    await credentials.open();
    return credentials;
  }
  if (!auth.webhookUrl) throw new Error('B24_WEBHOOK_URL: not set');
  return new WebhookCredentials(auth.webhookUrl, portal.apiVersion, portalId);
}

/** Provides the configured credentials under the portal's port, `PortalCredentials`. */
@Global()
@Module({
  providers: [
    {
      provide: PortalCredentials,
      useFactory: createCredentials,
      inject: [AuthSettings, PortalSettings, TokenStore, PORTAL_ID, BridgeMetrics],
    },
  ],
  exports: [PortalCredentials],
})
export class AuthModule {}
