import { Inject, Injectable, Optional } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { PORTAL_ID } from '../config/portal-id';
import { DeliveryService } from '../delivery/delivery.service';
import { DialWorker } from '../dialer/dial-worker';
import { PortalEventsStatus } from '../events/portal-events-status';
import { PbxFollower } from '../follow/pbx-follower';
import { createHash } from 'node:crypto';
import { PortalBudget } from '../portal/budget-waiters';
import { PortalClient } from '../portal/portal-client';
import { PortalCredentials } from '../portal/portal-credentials';
import { TokenStore } from '../store/token-store';
import { ConnectionLine, PageEmployee, PagePortal, PageSettings, PageSource, PageToken } from './page-source';
import { readEmployees } from './employees';
import { DIAL_PLAIN, DIAL_SECRETS, dialPageView, followLine, followPageView } from './page-views';

const READ_ONLY = "one portal: the settings are the environment's (read only here)";

/**
 * The page of a deployment serving one portal (B24_WEBHOOK_URL, or B24_PORTAL_URL with OAuth): its state is
 * this process's; its settings are the environment's, shown read-only (they change with a restart, as every
 * replica must read the same); PBX credentials are PBX_TOKENS, not created here.
 */
@Injectable()
export class SinglePageSource extends PageSource {
  readonly multi = false;

  constructor(
    private readonly config: AppConfig,
    @Inject(PORTAL_ID) private readonly portalId: string,
    private readonly credentials: PortalCredentials,
    private readonly client: PortalClient,
    private readonly delivery: DeliveryService,
    private readonly tokenStore: TokenStore,
    @Optional() private readonly events?: PortalEventsStatus,
    @Optional() private readonly dialer?: DialWorker,
    @Optional() private readonly follower?: PbxFollower,
  ) {
    super();
  }

  async portal(portalId: string): Promise<PagePortal | undefined> {
    if (portalId !== this.portalId) return undefined;
    const address = this.config.B24_PORTAL_URL ?? this.config.B24_WEBHOOK_URL ?? '';
    let domain = portalId;
    try {
      domain = new URL(address).host;
    } catch {
      // the sandbox without an address: the id names it
    }
    const origin = address ? new URL(address).origin : '';
    // OAuth: the install named the portal's member_id; the page takes no post naming another. An
    // uninstall (ONAPPUNINSTALL) closes the page; a reinstall (a new application token) ends its sessions.
    const stored = this.config.authMode === 'oauth' ? await this.tokenStore.findTokens(portalId) : undefined;
    const uninstalled = stored?.reauthorisationReason?.includes('ONAPPUNINSTALL') === true;
    const installation =
      this.config.authMode === 'oauth'
        ? `application ${createHash('sha256')
            .update(stored?.applicationToken ?? '')
            .digest('base64url')}`
        : 'webhook';
    return {
      portalId,
      domain,
      clientEndpoint: origin ? `${origin}/rest/` : '',
      active: !uninstalled,
      installation,
      memberId: stored?.memberId,
    };
  }

  async budget(): Promise<PortalBudget | undefined> {
    return this.config.authMode === 'oauth' ? this.client.budget : undefined;
  }

  async connection(): Promise<ConnectionLine[]> {
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

  employees(): Promise<PageEmployee[] | undefined> {
    return readEmployees(this.client);
  }

  async settings(): Promise<PageSettings> {
    const config = this.config;
    const dial: Record<string, string | undefined> = { DIAL_MODE: config.DIAL_MODE };
    for (const name of [...DIAL_PLAIN, ...DIAL_SECRETS]) {
      dial[name] = config[name] === undefined ? undefined : String(config[name]);
    }
    const followed = config.PBX_EVENTS || config.ASTERISK_CDR_URL;
    return {
      editable: false,
      defaultUserId: config.B24_DEFAULT_USER_ID,
      defaultCountry: config.DEFAULT_COUNTRY,
      missedCallTask: config.MISSED_CALL_TASK,
      lineNumber: config.B24_LINE_NUMBER,
      dial: dialPageView(dial),
      follow: followed
        ? followPageView({
            PBX_EVENTS: config.PBX_EVENTS,
            AMI_URL: config.AMI_URL,
            ESL_URL: config.ESL_URL,
            ASTERISK_CDR_URL: config.ASTERISK_CDR_URL,
            PBX_TRUNKS: config.PBX_TRUNKS.join(','),
          })
        : null,
    };
  }

  checkSettings() {
    return { errors: [{ field: 'body', problems: [READ_ONLY] }] };
  }

  async updateSettings() {
    return { errors: [{ field: 'body', problems: [READ_ONLY] }] };
  }

  async tokens(): Promise<PageToken[] | null> {
    return null;
  }

  async createToken(): Promise<{ id: string; token: string } | undefined> {
    return undefined;
  }

  async revokeToken(): Promise<boolean> {
    return false;
  }

  async storedDial(): Promise<Record<string, string> | undefined> {
    return undefined;
  }

  async storedFollow(): Promise<Record<string, string> | undefined> {
    return undefined;
  }
}
