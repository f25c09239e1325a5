import { Module } from '@nestjs/common';
import { CrmModule } from '../crm/crm.module';
import { DeliveryService } from './delivery.service';

@Module({
  imports: [CrmModule],
  providers: [DeliveryService],
  exports: [DeliveryService],
})
export class DeliveryModule {}
