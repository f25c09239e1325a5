import { Module } from '@nestjs/common';
import { AdminController } from './admin.controller';
import { AdminTokenGuard } from './admin-token.guard';

/** `/v1/admin`; re-queued calls wake delivery through the global WorkSignal, not through DeliveryModule. */
@Module({
  controllers: [AdminController],
  providers: [AdminTokenGuard],
})
export class AdminModule {}
