import { DynamicModule, Global, MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
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
import { SINGLE_PORTAL_PORTS, singlePortalProviders } from './single-portal';

/**
 * The portal registry, in every deployment (docs/API.md), and what it provides through the ports of the
 * folders below it: `PortalCrm` (lookups and directories by portal) and `WorkSignal` (wakes one portal's
 * delivery) and `/v1/admin/portals` in both modes. With many portals (`B24_APP_MODE=multi`): `PortalInstalls`
 * (the OAuth endpoints' installs and events), `PortalsHealth`, event routing by `member_id`.
 * With one portal: its seeded runtime and its parts (`single-portal.ts`).
 */
@Global()
@Module({})
export class TenancyModule implements NestModule {
  constructor(private readonly admin: AdminTokenGuard) {}

  static forRoot(options: { multi: boolean }): DynamicModule {
    const common = [
      RegistryDeps,
      PortalRegistry,
      AdminTokenGuard,
      { provide: PortalCrm, useClass: RegistryCrm },
      { provide: WorkSignal, useClass: RegistrySignal },
    ];
    const multi = [
      PortalRetention,
      MultiPortalInstalls,
      { provide: PortalInstalls, useExisting: MultiPortalInstalls },
      { provide: PortalsHealth, useClass: RegistryHealth },
      { provide: PortalEventRouting, useClass: RegistryEventRouting },
    ];
    return {
      module: TenancyModule,
      imports: [IntakeModule],
      // Single mode too: its one (seeded) portal's record, settings and PBX tokens.
      controllers: [PortalsController],
      providers: [...common, ...(options.multi ? multi : singlePortalProviders)],
      exports: options.multi
        ? [PortalRegistry, PortalCrm, WorkSignal, PortalInstalls, PortalsHealth, PortalEventRouting]
        : [PortalRegistry, PortalCrm, WorkSignal, ...SINGLE_PORTAL_PORTS],
    };
  }

  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply(adminJsonBody(this.admin))
      .forRoutes(
        { path: 'v1/admin/portals/*path', method: RequestMethod.PATCH },
        { path: 'v1/admin/portals/*path', method: RequestMethod.POST },
      );
  }
}
