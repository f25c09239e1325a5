import { Module, OnModuleInit } from '@nestjs/common';
import { CallIntake } from './call-intake.service';
import { ClickRegistry } from './click-registry';

/**
 * Intake: PBX events stored before they are acknowledged. Its store, configuration, the `WorkSignal` that
 * wakes delivery and the `ClickBus` come from global modules; the employee directory (CrmModule) tells
 * whose extension a click-to-call's PBX report comes from.
 */
@Module({
  providers: [CallIntake, ClickRegistry],
  exports: [CallIntake],
})
export class IntakeModule implements OnModuleInit {
  constructor(private readonly clicks: ClickRegistry) {}

  onModuleInit(): void {
    this.clicks.open();
  }
}
