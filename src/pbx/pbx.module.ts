import { MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { ThrottlerModule } from '@nestjs/throttler';
import { CallsModule } from '../calls/calls.module';
import { AppConfig } from '../config/app-config';
import { pbxJsonBody } from './json-body.middleware';
import { PbxController } from './pbx.controller';
import { PbxThrottlerGuard } from './pbx-throttler.guard';
import { PbxTokenGuard } from './pbx-token.guard';

@Module({
  imports: [
    CallsModule,
    ThrottlerModule.forRootAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => [{ ttl: 1000, limit: config.PBX_RATE_LIMIT_RPS }],
    }),
  ],
  controllers: [PbxController],
  providers: [PbxTokenGuard, PbxThrottlerGuard],
})
export class PbxModule implements NestModule {
  constructor(private readonly config: AppConfig) {}

  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply(pbxJsonBody(this.config.PBX_BODY_LIMIT))
      .forRoutes({ path: 'v1/calls/events', method: RequestMethod.ALL });
  }
}
