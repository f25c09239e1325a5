import { Global, Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { PortalCredentials } from './portal-credentials';
import { WebhookCredentials } from './webhook-credentials';

export function createCredentials(config: AppConfig): PortalCredentials {
  if (config.authMode === 'oauth') {
    throw new Error(
      'B24_AUTH_MODE: OAuth application mode is not available in this build yet; use B24_WEBHOOK_URL',
    );
  }
  if (!config.B24_WEBHOOK_URL) throw new Error('B24_WEBHOOK_URL: not set');
  return new WebhookCredentials(config.B24_WEBHOOK_URL, config.B24_API_VERSION, config.PORTAL_ID);
}

@Global()
@Module({
  providers: [{ provide: PortalCredentials, useFactory: createCredentials, inject: [AppConfig] }],
  exports: [PortalCredentials],
})
export class AuthModule {}
