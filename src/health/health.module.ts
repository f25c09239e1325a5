import { DynamicModule, Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { DialerModule } from '../dialer/dialer.module';
import { FollowModule } from '../follow/follow.module';
import { HealthController } from './health.controller';
import { HealthSources } from './health-sources';
import { Lifecycle } from './lifecycle';

/**
 * The probes and the shutdown sequence; with one portal readiness also reports the click-to-call dialer and,
 * with PBX_EVENTS, the followed PBX connection.
 */
@Module({})
export class HealthModule {
  static forRoot(options: { dialer: boolean; follow?: boolean }): DynamicModule {
    return {
      module: HealthModule,
      imports: [
        TerminusModule,
        ...(options.dialer ? [DialerModule] : []),
        ...(options.follow ? [FollowModule] : []),
      ],
      controllers: [HealthController],
      providers: [Lifecycle, HealthSources],
      exports: [Lifecycle],
    };
  }
}
