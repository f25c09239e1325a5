import { Module } from '@nestjs/common';
import { DeliveryModule } from '../delivery/delivery.module';
import { CallIntake } from './call-intake.service';

@Module({
  imports: [DeliveryModule],
  providers: [CallIntake],
  exports: [CallIntake, DeliveryModule],
})
export class CallsModule {}
