import { Controller, Get, Req } from '@nestjs/common';
import type { Request } from 'express';
import { HealthCheck, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import { CallStore, QueueStats } from '../store/call-store';
import { presentedToken } from '../common/presented-token';
import { digestsOf, matchesAny } from '../common/secrets';
import { BackgroundFigures } from './background-figures';
import { Lifecycle } from './lifecycle';
import { HealthSources } from './health-sources';
import { PortalHealth } from './portals-health';

/** What terminus answers for a check list with nothing in it: liveness depends on nothing. */
const LIVE = Object.freeze({ status: 'ok', info: {}, error: {}, details: {} });

/** How long one look at the store answers readiness probes: a burst of probes costs one write and one scan. */
const STORE_CHECK_REUSE_MS = 1000;

/**
 * With many portals, how old the per-portal figures (a grouped scan of every waiting call) may get before a
 * read in the background refreshes them: probes never wait for that scan, and it runs at most this often.
 */
const PORTAL_FIGURES_MAX_AGE_MS = 5000;

/** What readiness asks the store, shared by the probes of one STORE_CHECK_REUSE_MS. */
interface StoreCheck {
  startedAt: number;
  writable: Promise<void>;
  stats?: Promise<QueueStats>;
}

/**
 * Liveness says only that the process answers. Readiness says the store takes writes and the bridge is not
 * shutting down; the portal's state is reported in the details but never fails readiness, because intake
 * is durable whatever the portal does. The store's answers (a synced write, a queue scan) are reused for
 * STORE_CHECK_REUSE_MS, so probes cannot load the store; the shutdown is read on every probe. With many
 * portals a probe costs the same whatever the queues hold: the per-portal details (portal ids, the deepest
 * queues) are shown only to a caller with ADMIN_TOKEN or METRICS_TOKEN, from figures read in the background
 * at most every PORTAL_FIGURES_MAX_AGE_MS; an anonymous probe gets the mode and the number of portals.
 */
@Controller('health')
export class HealthController {
  private storeCheck?: StoreCheck;
  private readonly portalFigures?: BackgroundFigures<Record<string, unknown>>;
  /** The tokens that may read the per-portal details of many portals: ADMIN_TOKEN and METRICS_TOKEN. */
  private readonly detailTokens: Buffer[];

  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly store: CallStore,
    private readonly lifecycle: Lifecycle,
    private readonly sources: HealthSources,
  ) {
    const registry = sources.portals;
    if (registry) {
      this.portalFigures = new BackgroundFigures(() => registry.queues(), PORTAL_FIGURES_MAX_AGE_MS);
    }
    this.detailTokens = digestsOf(sources.security?.adminToken, sources.security?.metricsToken);
  }

  /**
   * Terminus's answer to a check of nothing, without running its executor: probes come often and must stay
   * cheap. `@HealthCheck()` still sets the same no-cache header and OpenAPI description as /health/ready.
   */
  @Get('live')
  @HealthCheck()
  live() {
    return LIVE;
  }

  @Get('ready')
  @HealthCheck()
  ready(@Req() request: Request) {
    const store = this.recentStoreCheck();
    const { portal } = this.sources;
    const portalChecks = portal
      ? this.singlePortalChecks(store, portal)
      : [async () => this.indicators.check('portals').up(await this.manyPortalDetails(request))];
    const follow = portal?.follow();
    return this.health.check([
      async () => {
        const check = this.indicators.check('store');
        try {
          await store.writable;
          return check.up();
        } catch (error) {
          return check.down({ message: (error as Error).message });
        }
      },
      () => {
        const check = this.indicators.check('lifecycle');
        return this.lifecycle.shuttingDown ? check.down({ message: 'shutting down' }) : check.up();
      },
      ...portalChecks,
      // Following the PBX (docs/API.md): a lost connection is reported, never fails readiness (intake is durable).
      ...(follow ? [() => this.indicators.check('pbxFollow').up(follow)] : []),
    ]);
  }

  private singlePortalChecks(store: StoreCheck, portal: PortalHealth) {
    return [
      async () => {
        const stats = (await store.stats) ?? { depth: 0, failed: 0 };
        return this.indicators.check('portal').up(portal.portal(stats));
      },
      // Click-to-call (docs/API.md): DIAL_MODE and whether the PBX took the last originate; never fails readiness.
      () => this.indicators.check('dialer').up(portal.dialer()),
    ];
  }

  /** Anonymous: the mode and how many portals. With ADMIN_TOKEN or METRICS_TOKEN: the registry's details. */
  private async manyPortalDetails(request: Request): Promise<Record<string, unknown>> {
    const portals = this.sources.portals;
    const overview = { mode: 'multi', portals: portals?.count() ?? 0 };
    const token = presentedToken(request);
    if (!portals || !this.portalFigures || !token || !matchesAny(token, this.detailTokens)) return overview;
    try {
      const { value, readAt } = await this.portalFigures.latest();
      return {
        ...portals.overview(),
        ...value,
        queueFiguresAgeSec: Math.round((Date.now() - readAt) / 1000),
      };
    } catch (error) {
      // Never a reason to fail readiness: intake is durable whatever the queues say.
      return {
        ...portals.overview(),
        queueFiguresError: `cannot read the queue figures: ${(error as Error).message}`,
      };
    }
  }

  private recentStoreCheck(): StoreCheck {
    const now = Date.now();
    if (!this.storeCheck || now - this.storeCheck.startedAt >= STORE_CHECK_REUSE_MS) {
      this.storeCheck = {
        startedAt: now,
        writable: this.store.checkWritable(),
        stats: this.sources.portal?.queueStats(),
      };
    }
    return this.storeCheck;
  }
}
