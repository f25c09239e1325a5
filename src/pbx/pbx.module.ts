import { MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { ThrottlerModule } from '@nestjs/throttler';
import { CallsModule } from '../calls/calls.module';
import { AppConfig } from '../config/app-config';
import { CrmModule } from '../crm/crm.module';
import { nativeBody, NativeFormat } from './adapters/native-body.middleware';
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
  constructor(
    private readonly config: AppConfig,
    private readonly tokens: PbxTokenGuard,
  ) {}

  configure(consumer: MiddlewareConsumer): void {
    const limit = this.config.PBX_BODY_LIMIT;
    const route = (path: string) => ({ path, method: RequestMethod.ALL });
    const body = (format: NativeFormat) => nativeBody(limit, this.tokens, format);
    consumer.apply(pbxJsonBody(limit, this.tokens)).forRoutes(route('v1/calls/events'));
    // Each PBX's route takes the encodings that PBX posts in, and no other (415). The depths leave room
    // above the deepest record seen (mod_json_cdr's callflow profiles: 7; Yeastar's call members: 5).
    consumer
      .apply(
        body({
          record: 'a FreeSWITCH CDR',
          encodings: ['json', 'form', 'base64-form'],
          maxDepth: 16,
          jsonField: 'cdr',
        }),
      )
      .forRoutes(route('v1/pbx/freeswitch'));
    consumer
      .apply(body({ record: 'an Asterisk CDR', encodings: ['form'], maxDepth: 1 }))
      .forRoutes(route('v1/pbx/asterisk'));
    consumer
      .apply(body({ record: 'a Yeastar webhook', encodings: ['json'], maxDepth: 8, jsonField: 'msg' }))
      .forRoutes(route('v1/pbx/yeastar'));
    consumer
      .apply(body({ record: 'a 3CX call journal', encodings: ['json', 'form'], maxDepth: 2 }))
      .forRoutes(route('v1/pbx/3cx/calls'));
  }
}
