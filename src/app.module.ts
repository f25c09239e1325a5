import { DynamicModule, Module } from '@nestjs/common';
import { AdminModule } from './admin/admin.module';
import { AppPageModule } from './app-page/app-page.module';
import { AuthModule } from './auth/auth.module';
import { OAuthModule } from './auth/oauth.module';
import { AppConfig } from './config/app-config';
import { ClicksModule } from './clicks/clicks.module';
import { ConfigurationModule } from './config/configuration.module';
import { CrmModule } from './crm/crm.module';
import { DeliveryModule } from './delivery/delivery.module';
import { DialerModule } from './dialer/dialer.module';
import { EventsModule } from './events/events.module';
import { FollowModule } from './follow/follow.module';
import { HealthModule } from './health/health.module';
import { LoggingModule } from './logging/logging.module';
import { MetricsModule } from './metrics/metrics.module';
import { PbxModule } from './pbx/pbx.module';
import { PortalModule } from './portal/portal.module';
import { StoreModule } from './store/store.module';
import { TenancyModule } from './tenancy/tenancy.module';

@Module({})
export class AppModule {
  /**
   * The configuration is validated before the module is built (main.ts: `loadEnvironment`), so tests hand in
   * their own; ConfigurationModule provides it, its typed views and PORTAL_ID to every module.
   */
  static forRoot(config: AppConfig): DynamicModule {
    const common = [
      ConfigurationModule.forRoot(config),
      LoggingModule,
      MetricsModule,
      StoreModule,
      ClicksModule,
    ];
    if (config.B24_APP_MODE === 'multi') {
      // Many portals (docs/API.md): each portal's credentials, client, lookups and delivery are the registry's
      // (src/tenancy/), built per installed portal; nothing is bound to one configured portal.
      return {
        module: AppModule,
        imports: [
          ...common,
          TenancyModule,
          OAuthModule,
          PbxModule,
          EventsModule.forRoot({ multi: true }),
          AdminModule,
          AppPageModule.forRoot({ multi: true }),
          HealthModule.forRoot({ dialer: false }),
        ],
      };
    }
    return {
      module: AppModule,
      imports: [
        ...common,
        AuthModule,
        OAuthModule,
        PortalModule,
        DeliveryModule,
        PbxModule,
        CrmModule,
        DialerModule,
        EventsModule.forRoot({ multi: false }),
        AdminModule,
        AppPageModule.forRoot({ multi: false, follow: Boolean(config.PBX_EVENTS) }),
        // Following the PBX (PBX_EVENTS, docs/API.md): one portal only; with many portals, each portal's `follow`.
        ...(config.PBX_EVENTS || config.ASTERISK_CDR_URL ? [FollowModule] : []),
        HealthModule.forRoot({ dialer: true, follow: Boolean(config.PBX_EVENTS || config.ASTERISK_CDR_URL) }),
      ],
    };
  }
}
