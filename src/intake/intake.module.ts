import { Module } from '@nestjs/common';
import { CallIntake } from './call-intake.service';

/**
 * Intake: PBX events stored before they are acknowledged. Its store, configuration and the `WorkSignal`
 * that wakes delivery come from global modules, so it imports no feature module.
 */
@Module({
  providers: [CallIntake],
  exports: [CallIntake],
})
export class IntakeModule {}
