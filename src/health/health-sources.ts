import { Inject, Injectable, Optional } from '@nestjs/common';
import { SecuritySettings } from '../config/settings';
import { PortalHealth, PortalsHealth } from './portals-health';

/**
 * What readiness reports beside the store and the shutdown, whichever the deployment provides (Nest fills
 * the properties): one portal's details or many portals' overview, and the tokens that may read many
 * portals' details.
 */
@Injectable()
export class HealthSources {
  @Optional() @Inject(PortalHealth) readonly portal?: PortalHealth;
  @Optional() @Inject(PortalsHealth) readonly portals?: PortalsHealth;
  @Optional() @Inject(SecuritySettings) readonly security?: SecuritySettings;
}
