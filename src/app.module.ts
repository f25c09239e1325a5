import { DynamicModule, Module } from '@nestjs/common';
import { AdminModule } from './admin/admin.module';
import { AppPageModule } from './app-page/app-page.module';
import { OAuthModule } from './auth/oauth.module';
import { AppConfig } from './config/app-config';
import { ConfigurationModule } from './config/configuration.module';
import { EventsModule } from './events/events.module';
import { HealthModule } from './health/health.module';
import { LoggingModule } from './logging/logging.module';
import { MetricsModule } from './metrics/metrics.module';
import { PbxModule } from './pbx/pbx.module';
import { StoreModule } from './store/store.module';
import { TenancyModule } from './tenancy/tenancy.module';

@Module({})
export class AppModule {
  /**
   * The configuration is validated before the module is built (main.ts: `loadEnvironment`), so tests hand in
   * their own; ConfigurationModule provides it, its typed views and PORTAL_ID to every module. One assembly
   * path for both modes: the portal registry (src/tenancy/) builds each portal's services, with one portal
   * the one seeded from the environment; Nest wires only the edges (HTTP, health, metrics, the page).
   */
  static forRoot(config: AppConfig): DynamicModule {
    const multi = config.B24_APP_MODE === 'multi';
    return {
      module: AppModule,
      imports: [
        ConfigurationModule.forRoot(config),
        LoggingModule,
        MetricsModule,
        StoreModule,
        OAuthModule,
        TenancyModule.forRoot({ multi }),
        PbxModule,
        EventsModule,
        AdminModule,
        AppPageModule.forRoot({ multi }),
        HealthModule,
      ],
    };
  }
}
