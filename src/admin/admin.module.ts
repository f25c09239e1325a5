import { Module } from '@nestjs/common';
import { DeliveryModule } from '../delivery/delivery.module';
import { AdminController } from './admin.controller';
import { AdminTokenGuard } from './admin-token.guard';

@Module({
  imports: [DeliveryModule],
  controllers: [AdminController],
  providers: [AdminTokenGuard],
})
export class AdminModule {}
