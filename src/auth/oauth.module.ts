import { MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { portalFormBody } from './form-body.middleware';
import { OAuthStartGuard } from './oauth-start.guard';
import { OAuthController } from './oauth.controller';
import { OAuthPorts } from './oauth-ports';
import { OAuthService } from './oauth.service';

/**
 * The OAuth endpoints; in webhook mode they answer 404. New tokens wake delivery through the global
 * WorkSignal, so this module imports nothing from delivery.
 */
@Module({
  controllers: [OAuthController],
  providers: [OAuthPorts, OAuthService, OAuthStartGuard],
})
export class OAuthModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply(portalFormBody())
      .forRoutes(
        { path: 'oauth/install', method: RequestMethod.POST },
        { path: 'oauth/events', method: RequestMethod.POST },
      );
  }
}
