import { MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { IntakeModule } from '../intake/intake.module';
import { IntakeSettings } from '../config/settings';
import { nativeBody, NativeFormat } from './adapters/native-body.middleware';
import { PbxAdaptersController } from './adapters/pbx-adapters.controller';
import { CallEventSubmission } from './call-event-submission';
import { pbxJsonBody } from './json-body.middleware';
import { LookupController } from './lookup.controller';
import { PbxController } from './pbx.controller';
import { RecordingController } from './recording.controller';
import { PbxThrottlerGuard } from './pbx-throttler.guard';
import { PbxTokenGuard } from './pbx-token.guard';

/** Everything PBXs call: intake, the PBXs' native formats and the lookup, behind the PBX token and rate. */
@Module({
  // Per PBX token and second, writes (PBX_RATE_LIMIT_RPS) and reads (PBX_READ_RATE_LIMIT_RPS) apart:
  // PbxThrottlerGuard.
  imports: [IntakeModule],
  controllers: [PbxController, RecordingController, PbxAdaptersController, LookupController],
  providers: [PbxTokenGuard, PbxThrottlerGuard, CallEventSubmission],
})
export class PbxModule implements NestModule {
  constructor(
    private readonly intake: IntakeSettings,
    private readonly tokens: PbxTokenGuard,
  ) {}

  configure(consumer: MiddlewareConsumer): void {
    const limit = this.intake.bodyLimitBytes;
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
