import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { StoreSettings } from '../config/settings';
import { PortalStore } from '../store/portal-store';

/** One run at start-up, then one an hour. */
const EVERY_MS = 3_600_000;

/**
 * PORTAL_RETENTION_DAYS (docs/API.md): a portal uninstalled for that long is deleted with everything stored
 * under its id, at start-up and hourly, on every replica (each portal in its own transaction, re-checked
 * there: a portal installed again meanwhile keeps its data).
 */
@Injectable()
export class PortalRetention implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('PortalRetention');
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;

  constructor(
    private readonly portals: PortalStore,
    private readonly settings: StoreSettings,
  ) {}

  onApplicationBootstrap(): void {
    this.schedule(0);
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** Deletes every portal uninstalled more than PORTAL_RETENTION_DAYS before `now`; returns their ids. */
  async purge(now = Date.now()): Promise<string[]> {
    const deleted: string[] = [];
    while (!this.stopped) {
      const batch = await this.portals.purgeUninstalled(now - this.settings.portalRetentionMs);
      deleted.push(...batch);
      if (batch.length === 0) break;
    }
    return deleted;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.purge().then(
        (deleted) => {
          if (deleted.length) {
            this.logger.log(
              `deleted ${deleted.length} portals uninstalled for longer than PORTAL_RETENTION_DAYS`,
            );
          }
        },
        (error: Error) =>
          this.logger.warn(`deleting uninstalled portals failed (${error.message}); next try in an hour`),
      );
      void this.running.then(() => this.schedule(EVERY_MS));
    }, delayMs);
    this.timer.unref();
  }
}
