import { BeforeApplicationShutdown, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { CrmLookupService } from '../crm/crm-lookup.service';
import { EmployeeDirectory } from '../crm/employee-directory';
import { BridgeMetrics } from '../metrics/bridge-metrics';
import { PortalClient } from '../portal/portal-client';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { CallStore, QueueStats } from '../store/call-store';
import { LeaseStore } from '../store/coordination-store';
import { DeliveryScheduler, PortalStatus } from './delivery-scheduler';
import { LeaseKeeper } from './lease-keeper';
import { WorkSignal } from '../common/work-signal';

/** Owns the portal's delivery scheduler for the application's lifetime. */
@Injectable()
export class DeliveryService
  extends WorkSignal
  implements OnApplicationBootstrap, BeforeApplicationShutdown
{
  private readonly scheduler: DeliveryScheduler;
  private stopWatching?: () => void;

  private budgetWaitReportedMs = 0;

  constructor(
    private readonly store: CallStore,
    private readonly client: PortalClient,
    config: AppConfig,
    private readonly metrics: BridgeMetrics,
    directory: EmployeeDirectory,
    lookups: CrmLookupService,
    leases: LeaseStore,
  ) {
    super();
    const portal = client.portalId;
    // The pod name (hostname) tells operators which replica delivers; the suffix tells restarts apart.
    const owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    const lease = new LeaseKeeper(leases, portal, owner, config.DELIVERY_LEASE_SEC * 1000, () =>
      this.notify(),
    );
    this.scheduler = new DeliveryScheduler(
      store,
      client,
      {
        defaultUserId: config.B24_DEFAULT_USER_ID,
        maxBackoffMs: config.DELIVERY_MAX_BACKOFF_SEC * 1000,
        maxAttempts: config.DELIVERY_MAX_ATTEMPTS,
        maxInFlight: 2,
        pauseMs: 30_000,
      },
      lease,
      {
        onCommand: (step, outcome) => metrics.commands.inc({ portal, step, outcome }),
        onRetry: (reason) => metrics.retries.inc({ portal, reason }),
      },
      {
        employeeFor: (extension) => (directory.loaded ? (directory.userIdFor(extension) ?? null) : undefined),
        bindingFor: (phone) => lookups.bindingFor(phone),
      },
    );
    metrics.onScrape(() => this.refreshGauges());
  }

  get portalId(): string {
    return this.client.portalId;
  }

  onApplicationBootstrap(): void {
    // Calls another replica took in: the replica delivering them hears of it at once.
    this.stopWatching = this.store.watchNewWork(this.client.portalId, () => this.notify());
    this.scheduler.start();
  }

  notify(): void {
    this.scheduler.notify();
  }

  /** New credentials were stored: delivery paused for the old ones starts again at once. */
  resume(): void {
    this.scheduler.resume();
  }

  workAdded(): void {
    this.notify();
  }

  credentialsRenewed(): void {
    this.resume();
  }

  /** Runs before the HTTP server and the store close: the batch in flight settles, nothing new starts. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopWatching?.();
    await this.scheduler.stop();
    this.client.budget.stop();
  }

  portalStatus(): PortalStatus {
    return this.scheduler.portalStatus();
  }

  queueStats(): Promise<QueueStats> {
    return this.store.queueStats(this.client.portalId);
  }

  private async refreshGauges(): Promise<void> {
    const portal = this.client.portalId;
    const stats = await this.queueStats();
    this.metrics.queueDepth.set({ portal }, stats.depth);
    this.metrics.queueOldestAge.set(
      { portal },
      stats.oldestCreatedAt ? Math.max(0, (Date.now() - stats.oldestCreatedAt) / 1000) : 0,
    );
    this.metrics.callsFailed.set({ portal }, stats.failed);
    const status = this.portalStatus();
    this.metrics.portalPaused.set({ portal }, status.paused ? 1 : 0);
    this.metrics.deliveryLeaseHeld.set({ portal }, status.deliveringHere ? 1 : 0);
    const waited = this.client.budget.snapshot().waitedMsTotal;
    this.metrics.budgetWait.inc({ portal }, (waited - this.budgetWaitReportedMs) / 1000);
    this.budgetWaitReportedMs = waited;
  }
}
