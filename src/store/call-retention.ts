import { Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { RecordingSettings, StoreSettings } from '../config/settings';
import { BridgeMetrics } from '../metrics/bridge-metrics';
import { CallStore } from './call-store';
import { DialStore } from './dial-store';
import { PortalEventStore } from './portal-event-store';

/** What retention deletes from: the calls, and where they are kept, dial requests and portal events. */
export interface RetainedStores {
  calls: CallStore;
  dials?: DialStore;
  events?: PortalEventStore;
}

/** Calls deleted per transaction: small, so intake never waits long behind one. */
export const RETENTION_BATCH = 500;
/** Between two batches: intake and delivery get the database (and, with SQLite, the event loop) back. */
const PAUSE_MS = 100;
/** Recording chunks no recording took (a push cut off by a crash) go this long after they were written. */
const ORPHAN_CHUNK_MS = 3_600_000;
/** One run at start-up, then one an hour. */
const EVERY_MS = 3_600_000;

/**
 * RETENTION_DAYS: settled calls (finished or failed, nothing left to send) unchanged for that long are
 * deleted with their events, a batch at a time, at start-up and every hour, on every replica (on
 * PostgreSQL concurrent runs skip each other's rows, so two replicas at once only share the work). A
 * call still due, or re-queued since, is never deleted; a repeat of a deleted call's event is new again.
 */
export class CallRetention implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('CallRetention');
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;
  private endPause?: () => void;

  constructor(
    private readonly stores: RetainedStores,
    private readonly settings: StoreSettings,
    private readonly metrics: BridgeMetrics,
    private readonly recordings?: RecordingSettings,
  ) {}

  onApplicationBootstrap(): void {
    this.scheduleRun(0);
  }

  /** Runs before the store closes: the batch in flight completes, no further one starts. */
  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.endPause?.();
    await this.running;
  }

  /**
   * Deletes, a batch at a time, every settled call last changed more than RETENTION_DAYS before `now`, and
   * returns how many went; then sent or failed dial requests and handled portal events as old. Once the
   * application is stopping it ends after the batch in flight.
   */
  async deleteExpired(now = Date.now()): Promise<number> {
    const before = now - this.settings.retentionMs;
    let deleted = 0;
    while (!this.stopped) {
      const batch = await this.stores.calls.deleteSettledCalls(before, RETENTION_BATCH);
      deleted += batch;
      this.metrics.callsDeleted.inc(batch);
      if (batch < RETENTION_BATCH || this.stopped) break;
      await this.pause();
    }
    const others = await this.deleteExpiredClicksAndPortalEvents(before);
    if (others) {
      this.logger.log(`deleted ${others} sent or failed dial requests and handled portal events`);
    }
    await this.expireRecordings(now);
    return deleted;
  }

  /**
   * Sent or failed dial requests and handled portal events last changed before `before`, a batch at a time
   * as the calls are (docs/decisions/dialer-fencing.md); pending ones are never deleted.
   */
  private async deleteExpiredClicksAndPortalEvents(before: number): Promise<number> {
    let deleted = 0;
    for (const deleteBatch of [
      (limit: number) => this.stores.dials?.deleteSettled(before, limit) ?? 0,
      (limit: number) => this.stores.events?.deleteSettled(before, limit) ?? 0,
    ]) {
      while (!this.stopped) {
        const batch = await deleteBatch(RETENTION_BATCH);
        deleted += batch;
        if (batch < RETENTION_BATCH || this.stopped) break;
        await this.pause();
      }
    }
    return deleted;
  }

  /**
   * RECORDING_KEEP_HOURS: recordings still held that long after they were stored (their call never settled)
   * go, and chunks of pushes or downloads cut off by a crash an hour after they were written.
   */
  async expireRecordings(now = Date.now()): Promise<number> {
    if (!this.recordings) return 0;
    let expired = 0;
    while (!this.stopped) {
      const batch = await this.stores.calls.expireRecordings(
        now - this.recordings.keepMs,
        now - ORPHAN_CHUNK_MS,
        RETENTION_BATCH,
      );
      expired += batch;
      if (batch < RETENTION_BATCH) break;
      await this.pause();
    }
    if (expired) this.logger.warn(`deleted ${expired} recordings held past RECORDING_KEEP_HOURS`);
    return expired;
  }

  private scheduleRun(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.deleteExpired().then(
        (deleted) => {
          if (deleted) {
            this.logger.log(
              `deleted ${deleted} finished or failed calls unchanged for ${this.settings.retentionDays} days, with their events`,
            );
          }
        },
        (error: Error) =>
          this.logger.warn(`deleting old calls failed (${error.message}); trying again in an hour`),
      );
      void this.running.then(() => this.scheduleRun(EVERY_MS));
    }, delayMs);
    this.timer.unref();
  }

  private pause(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, PAUSE_MS);
      this.endPause = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
