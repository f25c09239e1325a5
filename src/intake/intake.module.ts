import { Module } from '@nestjs/common';
import { CallIntake } from './call-intake.service';

/**
 * Intake: PBX events stored before they are acknowledged. Its store, configuration, the `WorkSignal` that
 * wakes delivery and the `PortalCrm` that tells each portal's employees come from global modules.
 */
@Module({
  providers: [CallIntake],
  exports: [CallIntake],
})
export class IntakeModule {}
