import { DynamicModule, Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { DialerModule } from '../dialer/dialer.module';
import { HealthController } from './health.controller';
import { Lifecycle } from './lifecycle';

/** The probes and the shutdown sequence; with one portal readiness also reports the click-to-call dialer. */
@Module({})
export class HealthModule {
  static forRoot(options: { dialer: boolean }): DynamicModule {
    return {
      module: HealthModule,
      imports: [TerminusModule, ...(options.dialer ? [DialerModule] : [])],
      controllers: [HealthController],
      providers: [Lifecycle],
      exports: [Lifecycle],
    };
  }
}
