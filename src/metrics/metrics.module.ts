import { Global, Module } from '@nestjs/common';
import { BridgeMetrics } from './bridge-metrics';
import { MetricsController } from './metrics.controller';
import { MetricsTokenGuard } from './metrics-token.guard';

@Global()
@Module({
  providers: [BridgeMetrics, MetricsTokenGuard],
  controllers: [MetricsController],
  exports: [BridgeMetrics],
})
export class MetricsModule {}
