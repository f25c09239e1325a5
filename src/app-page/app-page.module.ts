import { DynamicModule, MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { appPageFormBody } from './app-page-form';
import { AppPageController } from './app-page.controller';
import { DialTest } from './dial-test';
import { FollowTest } from './follow-test';
import { LinesController } from './lines.controller';
import { PageCallsController } from './page-calls.controller';
import { PageEntry } from './page-entry';
import { PageGate } from './page-gate';
import { PageResponder } from './page-responder';
import { PageSessions } from './page-session';
import { PageSettingsController } from './page-settings.controller';
import { PageSource } from './page-source';
import { PageTestsController } from './page-tests.controller';
import { ConnectionTests } from './connection-tests';
import { PageTokensController } from './page-tokens.controller';
import { RegistryPageSource } from './registry-page-source';
import { SingleConnection } from './single-connection';
import { SetupController } from './setup.controller';
import { SetupPages } from './setup-pages';
import { SinglePageSource } from './single-page-source';

/**
 * Page sessions are sealed with a key derived from the client secret (OAuth) or from ADMIN_TOKEN (webhook
 * mode): every replica has the same, nobody outside the deployment does.
 */
function pageSessions(config: AppConfig): PageSessions {
  const secret = config.authMode === 'oauth' ? config.B24_CLIENT_SECRET : config.ADMIN_TOKEN;
  return new PageSessions(secret, Date.now, config.APP_PAGE_RECHECK_SEC * 1000);
}

/**
 * The application's page in the portal (`/app`, docs/decisions/app-page.md): with many portals it reads and
 * changes each portal's record through the registry; with one, this process's state and the environment's
 * settings (read-only).
 */
@Module({})
export class AppPageModule implements NestModule {
  static forRoot(options: { multi: boolean }): DynamicModule {
    return {
      module: AppPageModule,
      controllers: [
        AppPageController,
        PageSettingsController,
        PageTestsController,
        PageTokensController,
        PageCallsController,
        SetupController,
        LinesController,
      ],
      providers: [
        ConnectionTests,
        DialTest,
        FollowTest,
        { provide: PageSessions, useFactory: pageSessions, inject: [AppConfig] },
        PageResponder,
        PageGate,
        PageEntry,
        SetupPages,
        ...(options.multi
          ? [{ provide: PageSource, useClass: RegistryPageSource }]
          : [SingleConnection, { provide: PageSource, useClass: SinglePageSource }]),
      ],
    };
  }

  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply(appPageFormBody())
      .forRoutes(
        { path: 'app', method: RequestMethod.POST },
        { path: 'app/*path', method: RequestMethod.POST },
      );
  }
}
