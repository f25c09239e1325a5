import { Global, Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { BridgeMetrics } from '../metrics/bridge-metrics';
import { TokenStore } from '../store/token-store';
import { OAuthCredentials } from './oauth-credentials';
import { oauthSettings } from './oauth-settings';
import { PortalCredentials } from './portal-credentials';
import { WebhookCredentials } from './webhook-credentials';

/** The mode comes from configuration: `B24_AUTH_MODE`, inferred when only one kind is configured. */
export async function createCredentials(
  config: AppConfig,
  tokens: TokenStore,
  metrics?: BridgeMetrics,
): Promise<PortalCredentials> {
  if (config.authMode === 'oauth') {
    const credentials = new OAuthCredentials(oauthSettings(config), tokens);
    credentials.onRefresh = (outcome) =>
      metrics?.tokenRefreshes.inc({ portal: credentials.portalId, outcome });
    await credentials.open();
    return credentials;
  }
  if (!config.B24_WEBHOOK_URL) throw new Error('B24_WEBHOOK_URL: not set');
  return new WebhookCredentials(config.B24_WEBHOOK_URL, config.B24_API_VERSION, config.PORTAL_ID);
}

@Global()
@Module({
  providers: [
    {
      provide: PortalCredentials,
      useFactory: createCredentials,
      inject: [AppConfig, TokenStore, BridgeMetrics],
    },
  ],
  exports: [PortalCredentials],
})
export class AuthModule {}
