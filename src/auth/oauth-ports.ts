import { Inject, Injectable, Optional } from '@nestjs/common';
import { PortalClient } from '../portal/portal-client';
import { PortalCredentials } from '../portal/portal-credentials';
import { PortalEventStore } from '../store/portal-event-store';
import { PortalInstalls } from './portal-installs';

/**
 * What the OAuth endpoints act through, whichever the deployment provides (Nest fills the properties): one
 * portal's credentials and client, or many portals' installs; and the store that tells the other replicas
 * of an uninstall.
 */
@Injectable()
export class OAuthPorts {
  @Optional() @Inject(PortalCredentials) readonly credentials?: PortalCredentials;
  @Optional() @Inject(PortalClient) readonly client?: PortalClient;
  @Optional() @Inject(PortalInstalls) readonly installs?: PortalInstalls;
  @Optional() @Inject(PortalEventStore) readonly events?: PortalEventStore;
}
