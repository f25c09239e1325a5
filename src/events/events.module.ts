import { Global, MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { AdminTokenGuard } from '../admin/admin-token.guard';
import { portalFormBody } from '../auth/form-body.middleware';
import { CrmModule } from '../crm/crm.module';
import { PortalEventBinder } from './portal-event-binder';
import { PortalEventProcessor } from './portal-event-processor';
import { PortalEventsStatus } from './portal-events-status';
import { PortalEventTokens } from './portal-event-tokens';
import { PortalEventsController } from './portal-events.controller';

/**
 * The portal's events (SPEC.md §6): `POST /v1/portal/events`, stored in `portal_events`, handled by the
 * processor (ClickBus for clicks, the lookup cache for CRM changes); `GET /v1/admin/portal-events`; in OAuth
 * mode the binder (event.bind at every install, the line, the offline poller). Global: health reads the status.
 */
@Global()
@Module({
  imports: [CrmModule],
  controllers: [PortalEventsController],
  providers: [
    PortalEventProcessor,
    PortalEventTokens,
    PortalEventBinder,
    PortalEventsStatus,
    AdminTokenGuard,
  ],
  exports: [PortalEventsStatus],
})
export class EventsModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(portalFormBody()).forRoutes({ path: 'v1/portal/events', method: RequestMethod.POST });
  }
}
