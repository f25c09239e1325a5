import { Global, MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { AdminTokenGuard } from '../admin/admin-token.guard';
import { PortalInstalls } from '../auth/portal-installs';
import { WorkSignal } from '../common/work-signal';
import { PortalCrm } from '../crm/portal-crm';
import { PortalsHealth } from '../health/portals-health';
import { adminJsonBody } from './admin-json-body';
import { MultiPortalInstalls } from './multi-portal-installs';
import { PortalRegistry } from './portal-registry';
import { PortalRetention } from './portal-retention';
import { RegistryDeps } from './registry-deps';
import { PortalsController } from './portals.controller';
import { RegistryCrm, RegistryEventRouting, RegistryHealth, RegistrySignal } from './registry-ports';
import { PortalEventRouting } from '../events/portal-event-routing';
import { IntakeModule } from '../intake/intake.module';

/**
 * Many portals in one deployment (`B24_APP_MODE=multi`, the API contract (docs/API.md)): the portal registry and what it
 * provides through the ports of the folders below it: `PortalCrm` (lookups and directories by portal),
 * `WorkSignal` (wakes one portal's delivery), `PortalInstalls` (the OAuth endpoints' installs and events)
 * and `PortalsHealth`; and `/v1/admin/portals`. Single-portal mode does not load it.
 */
@Global()
@Module({
  imports: [IntakeModule],
  controllers: [PortalsController],
  providers: [
    RegistryDeps,
    PortalRegistry,
    PortalRetention,
    AdminTokenGuard,
    { provide: PortalCrm, useClass: RegistryCrm },
    { provide: WorkSignal, useClass: RegistrySignal },
    MultiPortalInstalls,
    { provide: PortalInstalls, useExisting: MultiPortalInstalls },
    { provide: PortalsHealth, useClass: RegistryHealth },
    { provide: PortalEventRouting, useClass: RegistryEventRouting },
  ],
  exports: [PortalRegistry, PortalCrm, WorkSignal, PortalInstalls, PortalsHealth, PortalEventRouting],
})
export class TenancyModule implements NestModule {
  constructor(private readonly admin: AdminTokenGuard) {}

  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply(adminJsonBody(this.admin))
      .forRoutes(
        { path: 'v1/admin/portals/*path', method: RequestMethod.PATCH },
        { path: 'v1/admin/portals/*path', method: RequestMethod.POST },
      );
  }
}
