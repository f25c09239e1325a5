import { BridgeMetrics } from './bridge-metrics';

/**
 * What the delivery gauges read on each scrape. Structural, so metrics/ imports nothing of delivery,
 * the store or the portal client (they import metrics/ to count).
 */
export interface DeliveryGaugeSource {
  readonly portalId: string;
  queueStats(): Promise<{ depth: number; oldestCreatedAt?: number; failed: number }>;
  portalStatus(): {
    paused: boolean;
    deliveringHere: boolean;
    batchesInFlight: number;
    operatingTime: { method: string; usedSec: number }[];
  };
  /** The request budget's running total of time waiters spent waiting (ms). */
  budgetWaitedMs(): number;
}

/**
 * Fills the queue, pause, lease and budget-wait gauges of one portal from `source` at every scrape, so
 * they are read when asked for rather than kept up to date on every change.
 */
export function trackDeliveryGauges(metrics: BridgeMetrics, source: DeliveryGaugeSource): void {
  // The budget's wait is a running total; the counter gets what was added since the last scrape.
  let waitedReportedMs = 0;
  metrics.onScrape(async () => {
    const portal = source.portalId;
    const stats = await source.queueStats();
    metrics.queueDepth.set({ portal }, stats.depth);
    metrics.queueOldestAge.set(
      { portal },
      stats.oldestCreatedAt ? Math.max(0, (Date.now() - stats.oldestCreatedAt) / 1000) : 0,
    );
    metrics.callsFailed.set({ portal }, stats.failed);
    const status = source.portalStatus();
    metrics.portalPaused.set({ portal }, status.paused ? 1 : 0);
    metrics.deliveryLeaseHeld.set({ portal }, status.deliveringHere ? 1 : 0);
    metrics.batchesInFlight.set({ portal }, status.batchesInFlight);
    for (const use of status.operatingTime) {
      metrics.operatingSeconds.set({ portal, method: use.method }, use.usedSec);
    }
    const waited = source.budgetWaitedMs();
    metrics.budgetWait.inc({ portal }, (waited - waitedReportedMs) / 1000);
    waitedReportedMs = waited;
  });
}
