import { MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { ThrottlerModule } from '@nestjs/throttler';
import { CallsModule } from '../calls/calls.module';
import { AppConfig } from '../config/app-config';
import { CrmModule } from '../crm/crm.module';
import { nativeBody } from './adapters/native-body.middleware';
import { PbxAdaptersController } from './adapters/pbx-adapters.controller';
import { CallEventSubmission } from './call-event-submission';
import { pbxJsonBody } from './json-body.middleware';
import { PbxController } from './pbx.controller';
import { PbxThrottlerGuard } from './pbx-throttler.guard';
import { PbxTokenGuard } from './pbx-token.guard';

@Module({
  imports: [
    CallsModule,
    CrmModule,
    ThrottlerModule.forRootAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => [{ ttl: 1000, limit: config.PBX_RATE_LIMIT_RPS }],
    }),
  ],
  controllers: [PbxController, PbxAdaptersController],
  providers: [PbxTokenGuard, PbxThrottlerGuard, CallEventSubmission],
})
export class PbxModule implements NestModule {
  constructor(private readonly config: AppConfig) {}

  configure(consumer: MiddlewareConsumer): void {
    const limit = this.config.PBX_BODY_LIMIT;
    const route = (path: string) => ({ path, method: RequestMethod.ALL });
    consumer.apply(pbxJsonBody(limit)).forRoutes(route('v1/calls/events'));
    // Each PBX's route takes the encodings that PBX posts in, and no other (415).
    consumer.apply(nativeBody(limit, ['json', 'form', 'base64-form'])).forRoutes(route('v1/pbx/freeswitch'));
    consumer.apply(nativeBody(limit, ['form'])).forRoutes(route('v1/pbx/asterisk'));
    consumer.apply(nativeBody(limit, ['json'])).forRoutes(route('v1/pbx/yeastar'));
    consumer.apply(nativeBody(limit, ['json', 'form'])).forRoutes(route('v1/pbx/3cx/calls'));
  }
}
