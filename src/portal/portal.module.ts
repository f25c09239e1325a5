import { Global, Module } from '@nestjs/common';
import { PortalCredentials } from '../auth/portal-credentials';
import { AppConfig } from '../config/app-config';
import { BridgeMetrics } from '../metrics/bridge-metrics';
import { PortalClient } from './portal-client';
import { SharedBucketStore } from '../store/coordination-store';
import { PortalBudget } from './budget-waiters';
import { RequestBudget } from './request-budget';
import { SharedRequestBudget } from './shared-request-budget';

/** One bucket per process with SQLite; the database's bucket when replicas share PostgreSQL. */
function budgetFor(config: AppConfig, portalId: string, shared: SharedBucketStore | null): PortalBudget {
  return shared
    ? new SharedRequestBudget(shared, portalId, config.B24_RATE_LIMIT_RPS, config.B24_RATE_BURST)
    : new RequestBudget(config.B24_RATE_LIMIT_RPS, config.B24_RATE_BURST);
}

@Global()
@Module({
  providers: [
    {
      provide: PortalClient,
      inject: [PortalCredentials, AppConfig, BridgeMetrics, SharedBucketStore],
      useFactory: (
        credentials: PortalCredentials,
        config: AppConfig,
        metrics: BridgeMetrics,
        shared: SharedBucketStore | null,
      ) =>
        new PortalClient(
          credentials,
          budgetFor(config, credentials.portalId, shared),
          {
            timeoutMs: config.B24_TIMEOUT_MS,
            batchSize: config.B24_BATCH_SIZE,
            allowedDomains: config.B24_ALLOWED_DOMAINS,
          },
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
