import {
  BeforeApplicationShutdown,
  DynamicModule,
  Global,
  Inject,
  Injectable,
  MiddlewareConsumer,
  Module,
  NestModule,
  OnApplicationBootstrap,
  Optional,
  RequestMethod,
} from '@nestjs/common';
import { AdminTokenGuard } from '../admin/admin-token.guard';
import { portalFormBody } from '../auth/form-body.middleware';
import { ClickBus } from '../clicks/click';
import { PORTAL_ID } from '../config/portal-id';
import { EventSettings, LookupSettings } from '../config/settings';
import { CrmLookupService } from '../crm/crm-lookup.service';
import { BridgeMetrics } from '../metrics/bridge-metrics';
import { PortalClient } from '../portal/portal-client';
import { PortalCredentials } from '../portal/portal-credentials';
import { PortalEventStore } from '../store/portal-event-store';
import { PortalEventBinder, PortalEventBinderDeps } from './portal-event-binder';
import { PortalEventProcessor, PortalEventProcessorDeps } from './portal-event-processor';
import { PortalEventRouting, SinglePortalEventRouting } from './portal-event-routing';
import { PortalEventsStatus } from './portal-events-status';
import { PortalEventTokens } from './portal-event-tokens';
import { PortalEventsController } from './portal-events.controller';
import { SinglePortalBindingOwner, SinglePortalSignals } from './single-portal-signals';

/** The one portal's event processor and binder, from the application's providers (Nest fills the properties). */
@Injectable()
class SinglePortalEvents {
  @Inject(PortalEventStore) private readonly store!: PortalEventStore;
  @Inject(ClickBus) private readonly bus!: ClickBus;
  @Inject(CrmLookupService) private readonly lookups!: CrmLookupService;
  @Inject(BridgeMetrics) private readonly metrics!: BridgeMetrics;
  @Inject(LookupSettings) private readonly lookupSettings!: LookupSettings;
  @Inject(EventSettings) private readonly settings!: EventSettings;
  @Inject(PortalCredentials) private readonly credentials!: PortalCredentials;
  @Inject(PortalClient) private readonly client!: PortalClient;
  @Inject(PortalEventsStatus) private readonly status!: PortalEventsStatus;
  @Inject(PORTAL_ID) private readonly portalId!: string;

  processorDeps(): PortalEventProcessorDeps {
    const { store, bus, lookups, metrics, lookupSettings, portalId } = this;
    return { store, bus, lookups, metrics, lookupSettings, portalId };
  }

  binderDeps(processor: PortalEventProcessor): PortalEventBinderDeps {
    const { settings, credentials, client, store, metrics, status, portalId } = this;
    return { settings, credentials, client, store, processor, metrics, status, portalId };
  }
}

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
      SinglePortalEvents,
      {
        provide: PortalEventProcessor,
        useFactory: (deps: SinglePortalEvents) => new PortalEventProcessor(deps.processorDeps()),
        inject: [SinglePortalEvents],
      },
      PortalEventTokens,
      {
        provide: PortalEventBinder,
        useFactory: (deps: SinglePortalEvents, processor: PortalEventProcessor) =>
          new PortalEventBinder(deps.binderDeps(processor)),
        inject: [SinglePortalEvents, PortalEventProcessor],
      },
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
