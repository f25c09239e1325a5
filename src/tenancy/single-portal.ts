import { Injectable, Logger, OnModuleDestroy, OnModuleInit, Provider } from '@nestjs/common';
import { sameSecret } from '../common/secrets';
import { AppConfig } from '../config/app-config';
import { applicationTokenOf } from '../events/portal-event';
import { PortalEventRouting, UNINSTALLED } from '../events/portal-event-routing';
import { PortalHealth } from '../health/portals-health';
import { CallIntake } from '../intake/call-intake.service';
import { PortalClient } from '../portal/portal-client';
import { PortalCredentials } from '../portal/portal-credentials';
import { QueueStats } from '../store/call-store';
import { PortalEventStore, PortalSignal } from '../store/portal-event-store';
import { PortalRegistry } from './portal-registry';
import { PortalRuntime } from './portal-runtime';

/**
 * The seeded portal's runtime as it is now: a change of its settings (the page, on any replica) replaces
 * it, so its users ask here each time and never keep one (docs/decisions/one-assembly-path.md). Its
 * credentials and client stay the same object across the replacements (`PortalRuntimes`).
 */
@Injectable()
export class SeededRuntime {
  constructor(
    private readonly registry: PortalRegistry,
    /** The first runtime, opened before any user of this is built. */
    private readonly first: PortalRuntime,
  ) {}

  get current(): PortalRuntime {
    return this.registry.get(this.first.portalId) ?? this.first;
  }
}

/*
 * Single-portal mode's ports: the registry's seeded portal (seeded-portal.ts) is the application's one
 * portal, and these give the rest of the application its parts through the same ports as with many portals.
 */

/**
 * Event posts of the one portal: the post's application token must be the installed application's (OAuth)
 * or B24_APPLICATION_TOKEN (webhook mode), compared in constant time; with none configured nothing is
 * accepted. What another replica learnt from the portal's events acts here at once: a CRM change drops this
 * replica's cached lookups of the record (and every "no match"); an uninstall stops this replica's requests
 * before the next one is sent (OAuth mode).
 */
@Injectable()
export class SinglePortalEventRouting extends PortalEventRouting implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('PortalEvents');
  private readonly webhookToken?: string;
  private stopWatching?: () => void;

  constructor(
    private readonly seeded: SeededRuntime,
    private readonly store: PortalEventStore,
    config: AppConfig,
  ) {
    super();
    this.webhookToken = config.B24_APPLICATION_TOKEN;
  }

  private get runtime(): PortalRuntime {
    return this.seeded.current;
  }

  onModuleInit(): void {
    this.stopWatching = this.store.watch((signal) => this.heard(signal));
  }

  onModuleDestroy(): void {
    this.stopWatching?.();
  }

  private heard(signal: PortalSignal): void {
    if (signal.portalId !== this.runtime.portalId) return;
    if (signal.kind === 'crm-changed') {
      this.runtime.lookups.forgetRecord(signal.entityType, signal.entityId);
    } else {
      this.runtime.oauth
        ?.uninstalled(UNINSTALLED)
        .catch((error: Error) => this.logger.warn(`reading the uninstalled pair failed: ${error.message}`));
    }
  }

  /** OAuth mode: the pair needs re-authorisation (a reinstall resumes), as /oauth/events does it. */
  async uninstall(portalId: string): Promise<boolean> {
    const oauth = this.runtime.oauth;
    if (!oauth) return false;
    await oauth.requireReauthorisation(UNINSTALLED);
    await this.store.publish({ portalId, kind: 'uninstalled' });
    return true;
  }

  async portalOf(form: unknown): Promise<string | undefined> {
    const candidate = applicationTokenOf(form);
    if (!candidate) return undefined;
    const oauth = this.runtime.oauth;
    const accepted = oauth
      ? await oauth.isApplicationToken(candidate)
      : this.webhookToken !== undefined && sameSecret(this.webhookToken, candidate);
    return accepted ? this.runtime.portalId : undefined;
  }

  stored(): void {
    this.runtime.eventStored();
  }

  listed(): string {
    return this.runtime.portalId;
  }
}

/** The one portal's readiness details, from its runtime. */
@Injectable()
export class SinglePortalHealth extends PortalHealth {
  constructor(private readonly seeded: SeededRuntime) {
    super();
  }

  private get runtime(): PortalRuntime {
    return this.seeded.current;
  }

  queueStats(): Promise<QueueStats> {
    return this.runtime.queueStats();
  }

  portal(stats: QueueStats): Record<string, unknown> {
    const status = this.runtime.status();
    const authorisation = this.runtime.credentials.authorisation();
    const paused = status?.paused ?? false;
    return {
      portalId: this.runtime.portalId,
      credentialsAccepted: !paused && authorisation.state === 'authorised',
      // OAuth mode: awaiting-installation or needs-reauthorisation pause delivery until an operator acts.
      authorisation: authorisation.state,
      authorisationAction: authorisation.action ?? null,
      paused,
      // Several replicas: exactly one delivers a portal at a time (docs/decisions/replicas.md).
      deliveringHere: status?.deliveringHere ?? false,
      pausedReason: status?.pausedReason ?? null,
      lastRequestOk: status?.lastRequestOk ?? null,
      // Batches awaiting the portal's answer, and how many its answer time calls for (docs/decisions/delivery-and-budget.md).
      batchesInFlight: status?.batchesInFlight ?? 0,
      inFlightLimit: status?.inFlightLimit ?? null,
      // Server time per method against the portal's operating limit (B24_OPERATING_LIMIT_SEC).
      operatingTime: (status?.operatingTime ?? []).map((use) => ({
        method: use.method,
        usedSec: Math.round(use.usedSec * 10) / 10,
        limitSec: use.limitSec,
        blockedUntil: use.blockedUntil ? new Date(use.blockedUntil).toISOString() : null,
      })),
      queueDepth: stats.depth,
      failedCalls: stats.failed,
      // Portal events (docs/API.md): OAuth bindings, the line to choose as the default outgoing number.
      events: this.runtime.eventsStatus.view(),
      oldestWaitingSec: stats.oldestCreatedAt ? Math.round((Date.now() - stats.oldestCreatedAt) / 1000) : 0,
    };
  }

  dialer(): Record<string, unknown> {
    // Click-to-call (docs/API.md): DIAL_MODE and whether the PBX took the last originate.
    const status = this.runtime.dialer?.dialerStatus;
    return {
      ...(status ?? { mode: null, target: null, pbxReachable: null, lastError: null, lastAttemptAt: null }),
    };
  }

  follow(): Record<string, unknown> | undefined {
    const view = this.runtime.followView();
    return view ? { ...view } : undefined;
  }
}

/** Single mode's providers: the seeded portal's runtime and its parts under the application's ports. */
export const singlePortalProviders: Provider[] = [
  {
    provide: PortalRuntime,
    useFactory: (registry: PortalRegistry, intake: CallIntake) => registry.openSeeded(intake),
    inject: [PortalRegistry, CallIntake],
  },
  {
    provide: PortalCredentials,
    useFactory: (runtime: PortalRuntime) => runtime.credentials,
    inject: [PortalRuntime],
  },
  { provide: PortalClient, useFactory: (runtime: PortalRuntime) => runtime.client, inject: [PortalRuntime] },
  SeededRuntime,
  { provide: PortalEventRouting, useClass: SinglePortalEventRouting },
  { provide: PortalHealth, useClass: SinglePortalHealth },
];

/** What single mode's providers export. */
export const SINGLE_PORTAL_PORTS = [
  PortalRuntime,
  SeededRuntime,
  PortalCredentials,
  PortalClient,
  PortalEventRouting,
  PortalHealth,
];
