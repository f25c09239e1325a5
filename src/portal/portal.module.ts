import { Global, Module } from '@nestjs/common';
import { PortalCredentials } from '../auth/portal-credentials';
import { AppConfig } from '../config/app-config';
import { BridgeMetrics } from '../metrics/bridge-metrics';
import { PortalClient } from './portal-client';
import { RequestBudget } from './request-budget';

@Global()
@Module({
  providers: [
    {
      provide: PortalClient,
      inject: [PortalCredentials, AppConfig, BridgeMetrics],
      useFactory: (credentials: PortalCredentials, config: AppConfig, metrics: BridgeMetrics) =>
        new PortalClient(
          credentials,
          new RequestBudget(config.B24_RATE_LIMIT_RPS, config.B24_RATE_BURST),
          { timeoutMs: config.B24_TIMEOUT_MS, batchSize: config.B24_BATCH_SIZE },
          {
            onResponse(method, outcome, commands) {
              const portal = credentials.portalId;
              metrics.portalRequests.inc({ portal, method, outcome });
              if (method === 'batch' && outcome === 'ok') metrics.batchCommands.observe({ portal }, commands);
            },
          },
        ),
    },
  ],
  exports: [PortalClient],
})
export class PortalModule {}
