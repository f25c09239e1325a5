import { Global, Module } from '@nestjs/common';
import { BridgeMetrics } from './bridge-metrics';
import { MetricsController } from './metrics.controller';

@Global()
@Module({
  providers: [BridgeMetrics],
  controllers: [MetricsController],
  exports: [BridgeMetrics],
})
export class MetricsModule {}
