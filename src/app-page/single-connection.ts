import { Injectable } from '@nestjs/common';
import { SeededRuntime } from '../tenancy/single-portal';
import { ConnectionLine } from './page-source';
import { followLine } from './page-views';

/** The connection state of a deployment serving one portal: its seeded runtime's parts. */
@Injectable()
export class SingleConnection {
  constructor(private readonly seeded: SeededRuntime) {}

  lines(): ConnectionLine[] {
    const runtime = this.seeded.current;
    const authorisation = runtime.credentials.authorisation();
    const status = runtime.status();
    const dialer = runtime.dialer?.dialerStatus;
    const events = runtime.eventsStatus;
    const follow = runtime.followView();
    return [
      {
        key: 'portalState',
        ok: authorisation.state === 'authorised',
        detail: [authorisation.state, authorisation.action].filter(Boolean).join(': '),
      },
      {
        key: 'delivery',
        ok: !status?.paused,
        detail: [status?.paused ? `paused: ${status.pausedReason ?? ''}` : 'running', status?.lastError]
          .filter(Boolean)
          .join('; '),
      },
      {
        key: 'events' as const,
        ok: events.lastError ? false : events.boundAt !== null ? true : null,
        detail: events.lastError ?? '',
        events: events.lastError
          ? undefined
          : { mode: events.mode, line: events.line ?? runtime.scoped.events.lineNumber },
      },
      ...(follow ? [followLine([follow])] : []),
      {
        key: 'dialer',
        ok: dialer ? dialer.pbxReachable !== false : null,
        detail: dialer ? `${dialer.mode} ${dialer.target ?? ''} ${dialer.lastError ?? ''}`.trim() : '',
      },
    ];
  }
}
