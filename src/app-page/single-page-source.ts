import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { PORTAL_ID } from '../config/portal-id';
import { createHash } from 'node:crypto';
import { PortalBudget } from '../portal/budget-waiters';
import { PortalRuntime } from '../tenancy/portal-runtime';
import { TokenStore } from '../store/token-store';
import { ConnectionLine, PageEmployee, PagePortal, PageSettings, PageSource, PageToken } from './page-source';
import { readEmployees } from './employees';
import { DIAL_PLAIN, DIAL_SECRETS, dialPageView, followPageView } from './page-views';
import { SingleConnection } from './single-connection';

const READ_ONLY = "one portal: the settings are the environment's (read only here)";

/**
 * The page of a deployment serving one portal (B24_WEBHOOK_URL, or B24_PORTAL_URL with OAuth): its state is
 * this process's; its settings are the environment's, shown read-only (they change with a restart, as every
 * replica must read the same); PBX credentials are PBX_TOKENS, not created here.
 */
@Injectable()
export class SinglePageSource extends PageSource {
  constructor(
    private readonly config: AppConfig,
    @Inject(PORTAL_ID) private readonly portalId: string,
    private readonly runtime: PortalRuntime,
    private readonly tokenStore: TokenStore,
    private readonly status: SingleConnection,
  ) {
    super();
  }

  async portal(portalId: string): Promise<PagePortal | undefined> {
    if (portalId !== this.portalId) return undefined;
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
      // The seeded record's, from the environment's address (tenancy/seeded-portal.ts).
      domain: this.runtime.record.domain,
      clientEndpoint: this.runtime.record.clientEndpoint,
      active: !uninstalled,
      installation,
      memberId: stored?.memberId,
    };
  }

  async budget(): Promise<PortalBudget | undefined> {
    return this.config.authMode === 'oauth' ? this.runtime.client.budget : undefined;
  }

  async connection(): Promise<ConnectionLine[]> {
    return this.status.lines();
  }

  employees(): Promise<PageEmployee[] | undefined> {
    return readEmployees(this.runtime.client);
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
      lines: config.LINES,
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
