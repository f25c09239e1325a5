import { MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { AdminTokenGuard } from '../admin/admin-token.guard';
import { portalFormBody } from '../auth/form-body.middleware';
import { PortalEventsController } from './portal-events.controller';

/**
 * The portal's events (docs/API.md): `POST /v1/portal/events`, stored in `portal_events`, and
 * `GET /v1/admin/portal-events`. Which portal a post comes from and who handles it is the portal
 * registry's (`PortalEventRouting`): each portal's runtime runs its processor (ClickBus for clicks, the
 * lookup cache for CRM changes) and, in OAuth mode, its binder (event.bind at every install, the line, the
 * offline poller).
 */
@Module({
  controllers: [PortalEventsController],
  providers: [AdminTokenGuard],
})
export class EventsModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(portalFormBody()).forRoutes({ path: 'v1/portal/events', method: RequestMethod.POST });
  }
}
