import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { DialerModule } from '../dialer/dialer.module';
import { HealthController } from './health.controller';
import { Lifecycle } from './lifecycle';

@Module({
  imports: [TerminusModule, DialerModule],
  controllers: [HealthController],
  providers: [Lifecycle],
  exports: [Lifecycle],
})
export class HealthModule {}
