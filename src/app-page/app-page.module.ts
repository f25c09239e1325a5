import { DynamicModule, MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { DialerModule } from '../dialer/dialer.module';
import { FollowModule } from '../follow/follow.module';
import { appPageFormBody } from './app-page-form';
import { AppPageController } from './app-page.controller';
import { DialTest } from './dial-test';
import { FollowTest } from './follow-test';
import { PageSource } from './page-source';
import { RegistryPageSource } from './registry-page-source';
import { SinglePageSource } from './single-page-source';

/**
 * The application's page in the portal (`/app`, docs/decisions/app-page.md): with many portals it reads and
 * changes each portal's record through the registry; with one, this process's state and the environment's
 * settings (read-only).
 */
@Module({})
export class AppPageModule implements NestModule {
  static forRoot(options: { multi: boolean; follow?: boolean }): DynamicModule {
    return {
      module: AppPageModule,
      imports: options.multi ? [] : [DialerModule, ...(options.follow ? [FollowModule] : [])],
      controllers: [AppPageController],
      providers: [
        DialTest,
        FollowTest,
        { provide: PageSource, useClass: options.multi ? RegistryPageSource : SinglePageSource },
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
