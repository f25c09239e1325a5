import { PortalSettings } from '../config/settings';
import { BridgeMetrics } from '../metrics/bridge-metrics';
import { SharedBucketStore } from '../store/coordination-store';
import { PortalBudget } from './budget-waiters';
import { PortalClient } from './portal-client';
import { PortalCredentials } from './portal-credentials';
import { RequestBudget } from './request-budget';
import { SharedRequestBudget } from './shared-request-budget';

/** One bucket per process with SQLite; the database's bucket when replicas share PostgreSQL. */
function budgetFor(
  settings: PortalSettings,
  portalId: string,
  shared: SharedBucketStore | null,
): PortalBudget {
  return shared
    ? new SharedRequestBudget(shared, portalId, settings.rateLimitRps, settings.burst)
    : new RequestBudget(settings.rateLimitRps, settings.burst);
}

/** What a portal client is built from. */
export interface PortalClientParts {
  credentials: PortalCredentials;
  /** Its rate, burst, timeout, batch size, allowed domains and operating limit: each portal has its own. */
  settings: PortalSettings;
  portalId: string;
  metrics: BridgeMetrics;
  /** The database's request buckets (PostgreSQL), or null: one bucket per process. */
  shared: SharedBucketStore | null;
  /** The `portal` label of its request metrics; the portal's id by default. */
  metricsPortal?: string;
}

/** A portal client on the portal's credentials with its own request budget, counting its requests. */
export function createPortalClient(parts: PortalClientParts): PortalClient {
  const { credentials, settings, portalId, metrics, shared } = parts;
  const metricsPortal = parts.metricsPortal ?? portalId;
  return new PortalClient(
    credentials,
    budgetFor(settings, portalId, shared),
    {
      timeoutMs: settings.timeoutMs,
      batchSize: settings.batchSize,
      allowedDomains: settings.allowedDomains,
      operating: { windowMs: settings.operatingWindowMs, limitSec: settings.operatingLimitSec },
    },
    {
      onResponse(method, outcome, commands) {
        metrics.portalRequests.inc({ portal: metricsPortal, method, outcome });
        if (method === 'batch' && outcome === 'ok') {
          metrics.batchCommands.observe({ portal: metricsPortal }, commands);
        }
      },
    },
  );
}
