import { DynamicModule, Module } from '@nestjs/common';
import { AdminModule } from './admin/admin.module';
import { AuthModule } from './auth/auth.module';
import { OAuthModule } from './auth/oauth.module';
import { AppConfig } from './config/app-config';
import { ClicksModule } from './clicks/clicks.module';
import { ConfigurationModule } from './config/configuration.module';
import { CrmModule } from './crm/crm.module';
import { DeliveryModule } from './delivery/delivery.module';
import { DialerModule } from './dialer/dialer.module';
import { EventsModule } from './events/events.module';
import { HealthModule } from './health/health.module';
import { LoggingModule } from './logging/logging.module';
import { MetricsModule } from './metrics/metrics.module';
import { PbxModule } from './pbx/pbx.module';
import { PortalModule } from './portal/portal.module';
import { StoreModule } from './store/store.module';

@Module({})
export class AppModule {
  /**
   * The configuration is validated before the module is built (main.ts: `loadEnvironment`), so tests hand in
   * their own; ConfigurationModule provides it, its typed views and PORTAL_ID to every module.
   */
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigurationModule.forRoot(config),
        LoggingModule,
        MetricsModule,
        StoreModule,
        ClicksModule,
        AuthModule,
        OAuthModule,
        PortalModule,
        DeliveryModule,
        PbxModule,
        CrmModule,
        DialerModule,
        EventsModule,
        AdminModule,
        HealthModule,
      ],
    };
  }
}
