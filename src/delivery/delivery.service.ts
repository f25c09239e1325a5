import { BeforeApplicationShutdown, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { PortalClient } from '../portal/portal-client';
import { CallStore, QueueStats } from '../store/call-store';
import { DeliveryScheduler, PortalStatus } from './delivery-scheduler';

/** Owns the portal's delivery scheduler for the application's lifetime. */
@Injectable()
export class DeliveryService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly scheduler: DeliveryScheduler;

  constructor(
    private readonly store: CallStore,
    private readonly client: PortalClient,
    config: AppConfig,
  ) {
    this.scheduler = new DeliveryScheduler(store, client, {
      defaultUserId: config.B24_DEFAULT_USER_ID,
      maxBackoffMs: config.DELIVERY_MAX_BACKOFF_SEC * 1000,
      maxInFlight: 2,
      pauseMs: 30_000,
    });
  }

  get portalId(): string {
    return this.client.portalId;
  }

  onApplicationBootstrap(): void {
    this.scheduler.start();
  }

  notify(): void {
    this.scheduler.notify();
  }

  /** Runs before the HTTP server and the store close: the batch in flight settles, nothing new starts. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.scheduler.stop();
    this.client.budget.stop();
  }

  portalStatus(): PortalStatus {
    return this.scheduler.portalStatus();
  }

  queueStats(): Promise<QueueStats> {
    return this.store.queueStats(this.client.portalId);
  }
}
