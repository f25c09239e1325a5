import { Logger } from '@nestjs/common';
import { PortalStore } from '../store/portal-store';
import { DeliveryPlacement } from './delivery-placement';
import { PortalRuntimes } from './portal-runtimes';

/**
 * Sync of the portal list: reads every portal's id, status and version, reads each new or changed active
 * portal's record (its runtime rebuilt if built) and drops each gone one. Each portal is handled on its own: one that cannot
 * be read or built is logged and flagged, and the others go on (a failed one is tried again next sync).
 * Syncs never overlap: those asked for during one run once, after it.
 */
export class PortalSync {
  private readonly logger = new Logger('Portals');
  private running?: Promise<void>;
  private queued?: Promise<void>;
  private stopped = false;
  /** The active portals the placement last had. */
  private placedList?: Set<string>;

  constructor(
    private readonly portals: PortalStore,
    private readonly runtimes: PortalRuntimes,
    private readonly placement: DeliveryPlacement,
  ) {}

  /**
   * Resolves once a sync that started after this call has run: one under way may have read the list before
   * the caller's change (an install, a PATCH), so the caller waits for the next, shared by all who ask.
   */
  sync(): Promise<void> {
    if (!this.running) return this.start();
    this.queued ??= this.running.then(() => {
      this.queued = undefined;
      return this.running ?? this.start();
    });
    return this.queued;
  }

  private start(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    const run = this.syncOnce()
      .catch((error: Error) => this.logger.warn(`cannot read the portal list: ${error.message}`))
      .finally(() => {
        if (this.running === run) this.running = undefined;
      });
    this.running = run;
    return run;
  }

  /** No sync starts after this; the one under way ends. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
    await this.queued;
  }

  private async syncOnce(): Promise<void> {
    const versions = await this.portals.portalVersions();
    const active = versions.filter((version) => version.status === 'active');
    for (const version of active) {
      if (this.stopped) return;
      if (this.runtimes.known(version.portalId, version.updatedAt)) continue;
      try {
        const record = await this.portals.findPortal(version.portalId);
        if (record?.status === 'active') await this.runtimes.recordIs(record);
      } catch (error) {
        // `replace` contains its own failures; this is the record's read: the next sync reads it again.
        this.logger.warn(`portal ${version.portalId}: cannot read its record: ${(error as Error).message}`);
      }
    }
    const installed = new Set(active.map((version) => version.portalId));
    for (const portalId of this.runtimes.knownIds()) {
      if (this.stopped) return;
      // Uninstalled (or purged): paused. Its calls stay stored until it comes back or its data is deleted.
      if (!installed.has(portalId)) await this.runtimes.drop(portalId);
    }
    // The shard map is computed again only when the list changed: ten thousand quiet portals cost one read
    // every sync, not a placement (a change of the live replicas places on its own).
    if (this.placedList && sameSet(this.placedList, installed)) return;
    await this.placement.portalsAre([...installed]);
    this.placedList = installed;
  }
}

function sameSet(a: Set<string>, b: Set<string>): boolean {
  if (a.size !== b.size) return false;
  for (const item of a) if (!b.has(item)) return false;
  return true;
}
