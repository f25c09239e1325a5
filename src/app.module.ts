import { DynamicModule, Module } from '@nestjs/common';
import { AdminModule } from './admin/admin.module';
import { AuthModule } from './auth/auth.module';
import { AppConfig } from './config/app-config';
import { HealthModule } from './health/health.module';
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
      imports: [StoreModule, AuthModule, PortalModule, PbxModule, AdminModule, HealthModule],
      providers: [{ provide: AppConfig, useValue: config }],
      exports: [AppConfig],
    };
  }
}
