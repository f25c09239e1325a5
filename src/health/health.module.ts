import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { HealthController } from './health.controller';
import { HealthSources } from './health-sources';
import { Lifecycle } from './lifecycle';

/**
 * The probes and the shutdown sequence; readiness reports the portal (or, with many, the portals) through
 * the registry's ports (`portals-health.ts`).
 */
@Module({
  imports: [TerminusModule],
  controllers: [HealthController],
  providers: [Lifecycle, HealthSources],
  exports: [Lifecycle],
})
export class HealthModule {}
