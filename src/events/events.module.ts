import { MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { AdminTokenGuard } from '../admin/admin-token.guard';
import { portalFormBody } from '../auth/form-body.middleware';
import { CrmModule } from '../crm/crm.module';
import { PortalEventProcessor } from './portal-event-processor';
import { PortalEventTokens } from './portal-event-tokens';
import { PortalEventsController } from './portal-events.controller';

/**
 * The portal's events (SPEC.md §6): `POST /v1/portal/events`, stored in `portal_events`, handled by the
 * processor (ClickBus for clicks, the lookup cache for CRM changes); `GET /v1/admin/portal-events`.
 */
@Module({
  imports: [CrmModule],
  controllers: [PortalEventsController],
  providers: [PortalEventProcessor, PortalEventTokens, AdminTokenGuard],
})
export class EventsModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(portalFormBody()).forRoutes({ path: 'v1/portal/events', method: RequestMethod.POST });
  }
}
