import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { HealthController } from './health.controller';
import { Lifecycle } from './lifecycle';

@Module({
  imports: [TerminusModule],
  controllers: [HealthController],
  providers: [Lifecycle],
  exports: [Lifecycle],
})
export class HealthModule {}
