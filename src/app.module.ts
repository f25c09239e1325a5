import { DynamicModule, Module } from '@nestjs/common';
import { AdminModule } from './admin/admin.module';
import { AuthModule } from './auth/auth.module';
import { OAuthModule } from './auth/oauth.module';
import { AppConfig } from './config/app-config';
import { PORTAL_ID, portalIdOf } from './config/portal-id';
import { CrmModule } from './crm/crm.module';
import { HealthModule } from './health/health.module';
import { LoggingModule } from './logging/logging.module';
import { MetricsModule } from './metrics/metrics.module';
import { PbxModule } from './pbx/pbx.module';
import { PortalModule } from './portal/portal.module';
import { StoreModule } from './store/store.module';

@Module({})
export class AppModule {
  /** The configuration is validated before the module is built, so tests hand in their own. */
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      global: true,
      imports: [
        LoggingModule,
        MetricsModule,
        StoreModule,
        AuthModule,
        OAuthModule,
        PortalModule,
        PbxModule,
        CrmModule,
        AdminModule,
        HealthModule,
      ],
      providers: [
        { provide: AppConfig, useValue: config },
        { provide: PORTAL_ID, useValue: portalIdOf(config) },
      ],
      exports: [AppConfig, PORTAL_ID],
    };
  }
}
