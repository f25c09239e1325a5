import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { DeliveryModule } from '../delivery/delivery.module';
import { HealthController } from './health.controller';
import { Lifecycle } from './lifecycle';

@Module({
  imports: [TerminusModule, DeliveryModule],
  controllers: [HealthController],
  providers: [Lifecycle],
  exports: [Lifecycle],
})
export class HealthModule {}
