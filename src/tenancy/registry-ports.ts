import { BadRequestException, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { formOf, formText } from '../auth/portal-post';
import { sameSecret } from '../common/secrets';
import { PORTAL_ID_PATTERN } from '../config/portal-id';
import { PortalEventRouting, UNINSTALLED } from '../events/portal-event-routing';
import { PortalEventStore, PortalSignal } from '../store/portal-event-store';
import { MultiPortalInstalls } from './multi-portal-installs';
import { TokenStore } from '../store/token-store';
import { WorkSignal } from '../common/work-signal';
import { CrmLookupService } from '../crm/crm-lookup.service';
import { EmployeeDirectory } from '../crm/employee-directory';
import { PortalCrm, PortalIntake } from '../crm/portal-crm';
import { PortalsHealth } from '../health/portals-health';
import { BackgroundFigures } from '../health/background-figures';
import { BridgeMetrics } from '../metrics/bridge-metrics';
import { CallStore, QueueStats } from '../store/call-store';
import { PortalRuntime } from './portal-runtime';
import { PortalRegistry } from './portal-registry';

/**
 * Lookups and directories by portal: the served portal's own, none for a portal not served. An idle
 * portal's settings come from its record; its lookups build its runtime (docs/decisions/tenancy.md §5).
 */
@Injectable()
export class RegistryCrm extends PortalCrm {
  constructor(private readonly registry: PortalRegistry) {
    super();
  }

  lookupsOf(portalId: string): CrmLookupService | undefined {
    return this.registry.touch(portalId)?.lookups;
  }

  override async lookupsFor(portalId: string): Promise<CrmLookupService | undefined> {
    return (await this.registry.use(portalId))?.lookups;
  }

  directoryOf(portalId: string): EmployeeDirectory | undefined {
    return this.registry.touch(portalId)?.directory;
  }

  missedCallTaskOf(portalId: string): boolean | undefined {
    return this.registry.record(portalId)?.settings.missedCallTask;
  }

  defaultCountryOf(portalId: string): string | undefined {
    return this.registry.record(portalId)?.settings.defaultCountry;
  }

  intakeOf(portalId: string): PortalIntake | undefined {
    return this.registry.intakeOf(portalId);
  }
}

/** New work and new credentials wake the delivery of their own portal only (built first if idle here). */
@Injectable()
export class RegistrySignal extends WorkSignal {
  constructor(private readonly registry: PortalRegistry) {
    super();
  }

  workAdded(portalId?: string): void {
    if (!portalId) return this.registry.all().forEach((runtime) => runtime.notify());
    this.registry.wake(portalId, (runtime) => runtime.notify());
  }

  credentialsRenewed(portalId?: string): void {
    // An idle portal's next runtime reads the new credentials when it is built.
    if (portalId) this.registry.get(portalId)?.resume();
    else this.registry.all().forEach((runtime) => runtime.resume());
  }
}

/** How many portals readiness names with their queues. */
const TOP_PORTALS = 5;
/** How old the queue gauges may be: one grouped read per second however often metrics are scraped. */
const GAUGE_FIGURES_MAX_AGE_MS = 1000;

/**
 * Readiness details and the aggregated queue gauges of many portals: totals, and the portals with the
 * deepest queues (the API contract (docs/API.md): metrics aggregate unless METRICS_PORTAL_LABEL=1).
 */
@Injectable()
export class RegistryHealth extends PortalsHealth {
  constructor(
    private readonly registry: PortalRegistry,
    private readonly calls: CallStore,
    metrics: BridgeMetrics,
  ) {
    super();
    const waitedReportedMs = new Map<string, number>();
    // One grouped read of the waiting calls for every scrape of a second, refreshed in the background: a
    // scrape costs the same whatever the number of portals and waiting calls (the first one waits for it).
    const figures = new BackgroundFigures(
      () => this.calls.deepestQueues(this.registry.portalLabel ? this.count() : 0),
      GAUGE_FIGURES_MAX_AGE_MS,
    );
    metrics.onScrape(async () => {
      const { total, top } = (await figures.latest()).value;
      // One series per portal only where the operator asked for it (METRICS_PORTAL_LABEL=1).
      const groups: { portal: string; runtimes: PortalRuntime[]; stats: QueueStats }[] = [];
      if (this.registry.portalLabel) {
        const queues = new Map(top.map((queue) => [queue.portalId, queue]));
        for (const runtime of this.registry.all()) {
          groups.push({
            portal: runtime.portalId,
            runtimes: [runtime],
            stats: queues.get(runtime.portalId) ?? { depth: 0, failed: 0 },
          });
        }
      } else {
        groups.push({ portal: 'all', runtimes: this.registry.all(), stats: total });
      }
      for (const { portal, runtimes, stats } of groups) {
        metrics.queueDepth.set({ portal }, stats.depth);
        metrics.queueOldestAge.set({ portal }, ageSec(stats.oldestCreatedAt) ?? 0);
        const statuses = runtimes.map((runtime) => runtime.status());
        metrics.portalPaused.set({ portal }, statuses.filter((status) => status?.paused).length);
        metrics.deliveryLeaseHeld.set({ portal }, statuses.filter((status) => status?.deliveringHere).length);
        metrics.batchesInFlight.set(
          { portal },
          statuses.reduce((sum, status) => sum + (status?.batchesInFlight ?? 0), 0),
        );
        const waited = runtimes.reduce(
          (sum, runtime) => sum + runtime.client.budget.snapshot().waitedMsTotal,
          0,
        );
        metrics.budgetWait.inc({ portal }, Math.max(0, waited - (waitedReportedMs.get(portal) ?? 0)) / 1000);
        waitedReportedMs.set(portal, waited);
      }
    });
  }

  count(): number {
    return this.registry.served();
  }

  overview(): Record<string, unknown> {
    const runtimes = this.registry.all();
    const statuses = runtimes.map((runtime) => ({ runtime, status: runtime.status() }));
    return {
      mode: 'multi',
      replicaId: this.registry.replicaId,
      // Installed portals served here; `runtimes` of them have their services built now (the others are idle).
      portals: this.registry.served(),
      runtimes: runtimes.length,
      // Portals whose services could not be (re)built here: each one's reason is in /v1/admin/portals/:portalId.
      failedPortals: this.registry.failedPortals(),
      deliveringHere: statuses.filter(({ status }) => status?.deliveringHere).length,
      paused: statuses.filter(({ status }) => status?.paused).length,
      needingReauthorisation: runtimes.filter(
        (runtime) => runtime.credentials.authorisation().state !== 'authorised',
      ).length,
    };
  }

  async queues(): Promise<Record<string, unknown>> {
    const { total, top } = await this.calls.deepestQueues(TOP_PORTALS);
    return {
      queueDepth: total.depth,
      oldestWaitingSec: ageSec(total.oldestCreatedAt) ?? 0,
      deepestQueues: top.map((queue) => ({
        portalId: queue.portalId,
        queueDepth: queue.depth,
        oldestWaitingSec: ageSec(queue.oldestCreatedAt) ?? 0,
      })),
    };
  }
}

function ageSec(at: number | undefined): number | undefined {
  return at === undefined ? undefined : Math.max(0, Math.round((Date.now() - at) / 1000));
}

/**
 * Event posts of many portals: the post names its portal (`auth[member_id]`) and must carry that portal's
 * own application token (compared in constant time); an event is handled by its portal's processor. What
 * another replica learnt from a portal's events acts on this replica's runtime of it at once.
 */
@Injectable()
export class RegistryEventRouting extends PortalEventRouting implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('PortalEvents');
  private stopWatching?: () => void;

  constructor(
    private readonly registry: PortalRegistry,
    private readonly tokens: TokenStore,
    private readonly installs: MultiPortalInstalls,
    private readonly events: PortalEventStore,
  ) {
    super();
  }

  onModuleInit(): void {
    this.stopWatching = this.events.watch((signal) => this.heard(signal));
  }

  onModuleDestroy(): void {
    this.stopWatching?.();
  }

  async uninstall(portalId: string): Promise<boolean> {
    await this.installs.uninstall(portalId);
    return true;
  }

  /** A CRM change drops this replica's cached lookups; an uninstall stops its requests, then its runtime. */
  private heard(signal: PortalSignal): void {
    const runtime = this.registry.get(signal.portalId);
    if (signal.kind === 'crm-changed') {
      runtime?.lookups.forgetRecord(signal.entityType, signal.entityId);
      return;
    }
    void (runtime?.oauth?.uninstalled(UNINSTALLED) ?? Promise.resolve())
      .catch((error: Error) => this.logger.warn(`reading an uninstalled pair failed: ${error.message}`))
      .then(() => this.registry.sync());
  }

  async portalOf(form: unknown): Promise<string | undefined> {
    const auth = formOf(formOf(form).auth);
    const memberId = formText(auth.member_id);
    const token = formText(auth.application_token);
    // Not only the portals this replica serves now: a portal installed on another replica a moment ago
    // may post its ONAPPUNINSTALL here before this replica's next sync, and the portal does not retry.
    if (!memberId || !token) return undefined;
    const stored = await this.tokens.findTokens(memberId);
    return stored?.applicationToken && sameSecret(stored.applicationToken, token) ? memberId : undefined;
  }

  stored(portalId: string): void {
    const built = this.registry.get(portalId);
    if (built) return built.eventStored();
    void this.registry.use(portalId).then((runtime) => runtime?.eventStored());
  }

  listed(portal: string | undefined): string {
    if (!portal || !PORTAL_ID_PATTERN.test(portal)) {
      throw new BadRequestException('portal is required with B24_APP_MODE=multi (?portal=<member_id>)');
    }
    return portal;
  }
}
