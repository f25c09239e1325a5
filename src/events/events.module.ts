import {
  BeforeApplicationShutdown,
  DynamicModule,
  Global,
  MiddlewareConsumer,
  Module,
  NestModule,
  OnApplicationBootstrap,
  Optional,
  RequestMethod,
} from '@nestjs/common';
import { AdminTokenGuard } from '../admin/admin-token.guard';
import { portalFormBody } from '../auth/form-body.middleware';
import { PortalEventBinder } from './portal-event-binder';
import { PortalEventProcessor } from './portal-event-processor';
import { PortalEventRouting, SinglePortalEventRouting } from './portal-event-routing';
import { PortalEventsStatus } from './portal-events-status';
import { PortalEventTokens } from './portal-event-tokens';
import { PortalEventsController } from './portal-events.controller';
import { SinglePortalBindingOwner, SinglePortalSignals } from './single-portal-signals';

/**
 * The portal's events (docs/API.md): `POST /v1/portal/events`, stored in `portal_events`, handled by the
 * processor (ClickBus for clicks, the lookup cache for CRM changes); `GET /v1/admin/portal-events`; in OAuth
 * mode the binder (event.bind at every install, the line, the offline poller). Global: health reads the status.
 * With many portals (`forRoot({ multi: true })`) only the endpoints are here: the portal registry provides
 * `PortalEventRouting` and runs each portal's processor and binder.
 */
@Global()
@Module({})
export class EventsModule implements NestModule, OnApplicationBootstrap, BeforeApplicationShutdown {
  /** Single mode's processor and binder (with many portals each portal's runtime runs its own). */
  constructor(
    @Optional() private readonly processor?: PortalEventProcessor,
    @Optional() private readonly binder?: PortalEventBinder,
  ) {}

  static forRoot(options: { multi: boolean }): DynamicModule {
    const single = [
      PortalEventProcessor,
      PortalEventTokens,
      PortalEventBinder,
      PortalEventsStatus,
      SinglePortalSignals,
      SinglePortalBindingOwner,
      { provide: PortalEventRouting, useClass: SinglePortalEventRouting },
    ];
    return {
      module: EventsModule,
      controllers: [PortalEventsController],
      providers: [AdminTokenGuard, ...(options.multi ? [] : single)],
      exports: options.multi ? [] : [PortalEventsStatus],
    };
  }

  onApplicationBootstrap(): void {
    this.processor?.start();
    this.binder?.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all([this.processor?.close(), this.binder?.close()]);
  }

  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(portalFormBody()).forRoutes({ path: 'v1/portal/events', method: RequestMethod.POST });
  }
}
