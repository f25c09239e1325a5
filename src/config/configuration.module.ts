import { DynamicModule, Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { EgressPolicy } from '../common/egress';
import { AppConfig } from './app-config';
import { PORTAL_ID, portalIdOf } from './portal-id';
import { SETTINGS, settingsOf, tenantEgressOf } from './settings';

/**
 * One validated configuration for the whole application, global: `AppConfig` itself, each typed view
 * (`DeliverySettings`, …: derived once, frozen), `PORTAL_ID`, and @nestjs/config's `ConfigService` holding
 * the views by namespace. The configuration comes in validated (`loadConfig`, or `loadEnvironment` in
 * main.ts), so ConfigModule here reads neither `.env` nor process.env and writes nothing to process.env:
 * several bridges with different configurations can run in one process, as the end-to-end specs do.
 */
@Module({})
export class ConfigurationModule {
  static forRoot(config: AppConfig): DynamicModule {
    const settings = settingsOf(config);
    const views = Object.entries(SETTINGS).map(([name, { token }]) => ({
      provide: token,
      useValue: settings[name as keyof typeof settings],
    }));
    return {
      module: ConfigurationModule,
      global: true,
      imports: [
        // No `validate`: ConfigModule copies what it returns into process.env. `load` only fills ConfigService.
        ConfigModule.forRoot({
          isGlobal: true,
          ignoreEnvFile: true,
          validatePredefined: false,
          skipProcessEnv: true,
          load: [() => settings],
        }),
      ],
      providers: [
        { provide: AppConfig, useValue: config },
        { provide: PORTAL_ID, useValue: portalIdOf(config) },
        // The egress rule of every destination a portal's own settings name (SPEC §8).
        { provide: EgressPolicy, useValue: tenantEgressOf(config) },
        ...views,
      ],
      exports: [AppConfig, PORTAL_ID, EgressPolicy, ...views.map((view) => view.provide)],
    };
  }
}
