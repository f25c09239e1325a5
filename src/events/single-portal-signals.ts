import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit, Optional } from '@nestjs/common';
import { OAuthCredentials } from '../auth/oauth-credentials';
import { PORTAL_ID } from '../config/portal-id';
import { CrmLookupService } from '../crm/crm-lookup.service';
import { DeliveryService } from '../delivery/delivery.service';
import { PortalCredentials } from '../portal/portal-credentials';
import { PortalEventStore, PortalSignal } from '../store/portal-event-store';
import { PortalEventBinder } from './portal-event-binder';
import { UNINSTALLED } from './portal-event-routing';

/**
 * One portal (docs/API.md), on each replica: what another replica learnt from the portal's events acts
 * here at once. A CRM change drops this replica's cached lookups of the record (and every "no match"); an
 * uninstall stops this replica's requests before the next one is sent (OAuth mode).
 */
@Injectable()
export class SinglePortalSignals implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('PortalEvents');
  private stop?: () => void;

  constructor(
    private readonly store: PortalEventStore,
    private readonly lookups: CrmLookupService,
    private readonly credentials: PortalCredentials,
    @Inject(PORTAL_ID) private readonly portalId: string,
  ) {}

  onModuleInit(): void {
    this.stop = this.store.watch((signal) => this.heard(signal));
  }

  onModuleDestroy(): void {
    this.stop?.();
  }

  private heard(signal: PortalSignal): void {
    if (signal.portalId !== this.portalId) return;
    if (signal.kind === 'crm-changed') {
      this.lookups.forgetRecord(signal.entityType, signal.entityId);
    } else if (this.credentials instanceof OAuthCredentials) {
      this.credentials
        .uninstalled(UNINSTALLED)
        .catch((error: Error) => this.logger.warn(`reading the uninstalled pair failed: ${error.message}`));
    }
  }
}

/**
 * One portal: the replica holding the portal's delivery lease binds its events at start (and a replica
 * taking the lease over checks them once), so replicas starting together do not bind side by side.
 */
@Injectable()
export class SinglePortalBindingOwner implements OnModuleInit {
  constructor(
    private readonly binder: PortalEventBinder,
    @Optional() private readonly delivery?: DeliveryService,
  ) {}

  onModuleInit(): void {
    const delivery = this.delivery;
    if (delivery) this.binder.owns = () => delivery.portalStatus().deliveringHere;
  }
}
