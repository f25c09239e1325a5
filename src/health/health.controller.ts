import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import { PortalCredentials } from '../auth/portal-credentials';
import { DeliveryService } from '../delivery/delivery.service';
import { CallStore } from '../store/call-store';
import { Lifecycle } from './lifecycle';

/**
 * Liveness says only that the process answers. Readiness says the store takes writes and the bridge is not
 * shutting down; the portal's state is reported in the details but never fails readiness, because intake
 * is durable whatever the portal does.
 */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly store: CallStore,
    private readonly delivery: DeliveryService,
    private readonly lifecycle: Lifecycle,
    private readonly credentials: PortalCredentials,
  ) {}

  @Get('live')
  @HealthCheck()
  live() {
    return this.health.check([]);
  }

  @Get('ready')
  @HealthCheck()
  ready() {
    return this.health.check([
      async () => {
        const check = this.indicators.check('store');
        try {
          await this.store.checkWritable();
          return check.up();
        } catch (error) {
          return check.down({ message: (error as Error).message });
        }
      },
      () => {
        const check = this.indicators.check('lifecycle');
        return this.lifecycle.shuttingDown ? check.down({ message: 'shutting down' }) : check.up();
      },
      async () => {
        const stats = await this.delivery.queueStats();
        const status = this.delivery.portalStatus();
        const authorisation = this.credentials.authorisation();
        return this.indicators.check('portal').up({
          portalId: status.portalId,
          credentialsAccepted: !status.paused && authorisation.state === 'authorised',
          // OAuth mode: awaiting-installation or needs-reauthorisation pause delivery until an operator acts.
          authorisation: authorisation.state,
          authorisationAction: authorisation.action ?? null,
          paused: status.paused,
          // Several replicas: exactly one delivers a portal at a time (docs/ARCHITECTURE.md "Several replicas").
          deliveringHere: status.deliveringHere,
          pausedReason: status.pausedReason ?? null,
          lastRequestOk: status.lastRequestOk ?? null,
          queueDepth: stats.depth,
          failedCalls: stats.failed,
          oldestWaitingSec: stats.oldestCreatedAt
            ? Math.round((Date.now() - stats.oldestCreatedAt) / 1000)
            : 0,
        });
      },
    ]);
  }
}
