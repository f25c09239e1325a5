import { Injectable, Optional } from '@nestjs/common';
import { DeliveryService } from '../delivery/delivery.service';
import { DialWorker } from '../dialer/dial-worker';
import { PortalEventsStatus } from '../events/portal-events-status';
import { PbxFollower } from '../follow/pbx-follower';
import { PortalCredentials } from '../portal/portal-credentials';
import { ConnectionLine } from './page-source';
import { followLine } from './page-views';

/** The connection state of a deployment serving one portal: this process's own parts. */
@Injectable()
export class SingleConnection {
  constructor(
    private readonly credentials: PortalCredentials,
    private readonly delivery: DeliveryService,
    @Optional() private readonly events?: PortalEventsStatus,
    @Optional() private readonly dialer?: DialWorker,
    @Optional() private readonly follower?: PbxFollower,
  ) {}

  lines(): ConnectionLine[] {
    const authorisation = this.credentials.authorisation();
    const status = this.delivery.portalStatus();
    const dialer = this.dialer?.dialerStatus;
    return [
      {
        key: 'portalState',
        ok: authorisation.state === 'authorised',
        detail: [authorisation.state, authorisation.action].filter(Boolean).join(': '),
      },
      {
        key: 'delivery',
        ok: !status.paused,
        detail: [status.paused ? `paused: ${status.pausedReason ?? ''}` : 'running', status.lastError]
          .filter(Boolean)
          .join('; '),
      },
      ...(this.events
        ? [
            {
              key: 'events' as const,
              ok: this.events.lastError ? false : this.events.boundAt !== null ? true : null,
              detail: this.events.lastError ?? `${this.events.mode}, line ${this.events.line ?? '-'}`,
            },
          ]
        : []),
      ...(this.follower ? [followLine([this.follower.status()])] : []),
      {
        key: 'dialer',
        ok: dialer ? dialer.pbxReachable !== false : null,
        detail: dialer ? `${dialer.mode} ${dialer.target ?? ''} ${dialer.lastError ?? ''}`.trim() : '',
      },
    ];
  }
}
