import { Logger } from '@nestjs/common';
import { PortalStore } from '../store/portal-store';
import { PortalRuntimes } from './portal-runtimes';
import { SeededPortal } from './seeded-portal';

/**
 * Single mode's sync: the seeded portal's stored record, read every few seconds and after a change made
 * here; a newer version (a save on the page of any replica) rebuilds its runtime as multi mode's sync
 * rebuilds a portal's (`PortalRuntimes.recordIs`: build, open, publish, the previous one closed first).
 * Syncs never overlap: those asked for during one run once, after it.
 */
export class SeededSync {
  private readonly logger = new Logger('Portals');
  private running?: Promise<void>;
  private queued?: Promise<void>;
  private stopped = false;

  constructor(
    private readonly portals: PortalStore,
    private readonly runtimes: PortalRuntimes,
    private readonly seeded: SeededPortal,
  ) {}

  /** The stored record, created if missing: what the seeded runtime is first built from. */
  async open(): Promise<void> {
    const { record } = this.seeded;
    const stored = await this.portals.ensurePortal({ ...record, now: Date.now() });
    await this.runtimes.recordIs(stored);
  }

  /** Resolves once a read that started after this call has run (the caller's change is in it). */
  sync(): Promise<void> {
    if (!this.running) return this.start();
    this.queued ??= this.running.then(() => {
      this.queued = undefined;
      return this.running ?? this.start();
    });
    return this.queued;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
    await this.queued;
  }

  private start(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    const run = this.syncOnce()
      .catch((error: Error) => this.logger.warn(`cannot read the portal's settings: ${error.message}`))
      .finally(() => {
        if (this.running === run) this.running = undefined;
      });
    this.running = run;
    return run;
  }

  private async syncOnce(): Promise<void> {
    const { portalId } = this.seeded.record;
    const record = await this.portals.findPortal(portalId);
    // Gone from the store (deleted by hand): the next start creates it again; until then nothing changes.
    if (!record || this.stopped) return;
    if (this.runtimes.known(portalId, record.updatedAt)) return;
    await this.runtimes.recordIs({ ...record, status: 'active' });
  }
}
