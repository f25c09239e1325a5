import { Global, Module } from '@nestjs/common';
import { PortalCredentials } from '../auth/portal-credentials';
import { AppConfig } from '../config/app-config';
import { PortalClient } from './portal-client';
import { RequestBudget } from './request-budget';

@Global()
@Module({
  providers: [
    {
      provide: PortalClient,
      inject: [PortalCredentials, AppConfig],
      useFactory: (credentials: PortalCredentials, config: AppConfig) =>
        new PortalClient(credentials, new RequestBudget(config.B24_RATE_LIMIT_RPS, config.B24_RATE_BURST), {
          timeoutMs: config.B24_TIMEOUT_MS,
          batchSize: config.B24_BATCH_SIZE,
        }),
    },
  ],
  exports: [PortalClient],
})
export class PortalModule {}
