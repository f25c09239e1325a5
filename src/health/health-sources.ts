import { Inject, Injectable, Optional } from '@nestjs/common';
import { SecuritySettings } from '../config/settings';
import { DeliveryService } from '../delivery/delivery.service';
import { DialWorker } from '../dialer/dial-worker';
import { PortalEventsStatus } from '../events/portal-events-status';
import { PbxFollower } from '../follow/pbx-follower';
import { PortalCredentials } from '../portal/portal-credentials';
import { PortalsHealth } from './portals-health';

/**
 * What readiness reports beside the store and the shutdown, whichever the deployment provides (Nest fills
 * the properties): one portal's delivery, credentials, events and dialer; many portals' overview; the
 * followed PBX; and the tokens that may read many portals' details.
 */
@Injectable()
export class HealthSources {
  @Optional() @Inject(DeliveryService) readonly delivery?: DeliveryService;
  @Optional() @Inject(PortalCredentials) readonly credentials?: PortalCredentials;
  @Optional() @Inject(DialWorker) readonly dialer?: DialWorker;
  @Optional() @Inject(PortalEventsStatus) readonly portalEvents?: PortalEventsStatus;
  @Optional() @Inject(PortalsHealth) readonly portals?: PortalsHealth;
  @Optional() @Inject(PbxFollower) readonly follower?: PbxFollower;
  @Optional() @Inject(SecuritySettings) readonly security?: SecuritySettings;
}
