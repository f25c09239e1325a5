import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { AppConfig } from '../config/app-config';
import { PORTAL_ID } from '../config/portal-id';
import { SecuritySettings } from '../config/settings';
import { PortalBudget } from '../portal/budget-waiters';
import { PortalStore } from '../store/portal-store';
import { TokenStore } from '../store/token-store';
import { PortalRegistry } from '../tenancy/portal-registry';
import { checkPortalSettingsShape, createPbxToken } from '../tenancy/portal-settings-check';
import { SeededRuntime } from '../tenancy/single-portal';
import { readEmployees } from './employees';
import { ConnectionLine, PageEmployee, PagePortal, PageSettings, PageSource, PageToken } from './page-source';
import { DIAL_PLAIN, DIAL_SECRETS, dialPageView, followPageView } from './page-views';
import { SingleConnection } from './single-connection';
import { storedTokens, storeSettings } from './stored-settings';

/** The id prefix of a PBX_TOKENS entry as the page lists it (never the token, never revocable here). */
const ENV_TOKEN = 'env-';

/**
 * The page of a deployment serving one portal (B24_WEBHOOK_URL, or B24_PORTAL_URL with OAuth). Its state is
 * the seeded runtime's as it is now; its settings are the portal's stored record over the environment's
 * (tenancy/seeded-portal.ts), changed as with many portals: stored, and every replica rebuilds the runtime.
 * PBX tokens: those created here (stored as digests) beside PBX_TOKENS, listed as the environment's.
 */
@Injectable()
export class SinglePageSource extends PageSource {
  // The stored record's side (Nest fills these; the constructor keeps the runtime's).
  @Inject(PortalStore) private readonly portals!: PortalStore;
  @Inject(PortalRegistry) private readonly registry!: PortalRegistry;
  @Inject(SecuritySettings) private readonly security!: SecuritySettings;

  constructor(
    private readonly config: AppConfig,
    @Inject(PORTAL_ID) private readonly portalId: string,
    private readonly seeded: SeededRuntime,
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
    const { record } = this.seeded.current;
    return {
      portalId,
      // The seeded record's, from the environment's address (tenancy/seeded-portal.ts).
      domain: record.domain,
      clientEndpoint: record.clientEndpoint,
      active: !uninstalled,
      installation,
      memberId: stored?.memberId,
    };
  }

  async budget(): Promise<PortalBudget | undefined> {
    return this.config.authMode === 'oauth' ? this.seeded.current.client.budget : undefined;
  }

  async connection(): Promise<ConnectionLine[]> {
    return this.status.lines();
  }

  employees(): Promise<PageEmployee[] | undefined> {
    return readEmployees(this.seeded.current.client);
  }

  /** The stored own settings (empty: the environment's); dial and PBX events: the stored, else the environment's. */
  async settings(portalId: string): Promise<PageSettings> {
    const own = (await this.portals.findPortal(portalId))?.settings ?? {};
    return {
      editable: true,
      defaultUserId: own.defaultUserId,
      defaultCountry: own.defaultCountry,
      missedCallTask: own.missedCallTask,
      transcribe: own.transcribe,
      lineNumber: own.lineNumber,
      lines: own.lines ?? this.config.LINES,
      dial: dialPageView(own.dial ?? this.environmentDial()),
      follow: followPageView(own.follow ?? this.environmentFollow()),
      environment: {
        defaultUserId: this.config.B24_DEFAULT_USER_ID,
        defaultCountry: this.config.DEFAULT_COUNTRY,
        missedCallTask: this.config.MISSED_CALL_TASK,
        // The one portal has transcripts whenever the deployment names a service.
        transcribe: this.config.TRANSCRIBE_URL !== undefined,
        lineNumber: this.config.B24_LINE_NUMBER,
      },
    };
  }

  checkSettings(body: Record<string, unknown>) {
    // A test, storing nothing: the shape checks only (single mode's own settings reach wherever they point).
    const checked = checkPortalSettingsShape(
      body,
      { production: this.registry.production },
      this.registry.egress,
    );
    return 'errors' in checked ? checked : { patch: { ...checked.patch } };
  }

  async updateSettings(portalId: string, body: Record<string, unknown>) {
    const own = (await this.portals.findPortal(portalId))?.settings ?? {};
    const patch = { ...body };
    // The forms show the environment's dial and PBX-events settings where none are stored: posted back
    // unchanged they stay the environment's (not copied into the record); changed, they are stored.
    if (!own.dial && sameSettings(patch.dial, this.environmentDial())) delete patch.dial;
    if (!own.follow && sameSettings(patch.follow, this.environmentFollow())) delete patch.follow;
    return storeSettings(this.portals, this.registry, portalId, patch);
  }

  async tokens(portalId: string): Promise<PageToken[]> {
    const environment = this.security.pbxTokens.map((_, index) => ({
      id: `${ENV_TOKEN}${index + 1}`,
      label: `PBX_TOKENS #${index + 1}`,
      createdAt: '',
      fromEnvironment: true,
    }));
    return [...environment, ...(await storedTokens(this.portals, portalId))];
  }

  async createToken(
    portalId: string,
    label: string | undefined,
  ): Promise<{ id: string; token: string } | undefined> {
    const created = await createPbxToken(this.portals, portalId, label);
    return created && { id: created.record.id, token: created.token };
  }

  revokeToken(portalId: string, id: string): Promise<boolean> {
    // PBX_TOKENS are the environment's: removed there, not here.
    if (id.startsWith(ENV_TOKEN)) return Promise.resolve(false);
    return this.portals.revokePbxToken(portalId, id);
  }

  async storedDial(portalId: string): Promise<Record<string, string> | undefined> {
    return (await this.portals.findPortal(portalId))?.settings.dial ?? this.environmentDial();
  }

  async storedFollow(portalId: string): Promise<Record<string, string> | undefined> {
    return (await this.portals.findPortal(portalId))?.settings.follow ?? this.environmentFollow();
  }

  /** The environment's dial settings under their names, as the settings form posts them back; none: off. */
  private environmentDial(): Record<string, string> | undefined {
    const config = this.config;
    if (!config.DIAL_MODE) return undefined;
    const dial: Record<string, string> = { DIAL_MODE: config.DIAL_MODE };
    for (const name of [...DIAL_PLAIN, ...DIAL_SECRETS]) {
      if (config[name] !== undefined && config[name] !== '') dial[name] = String(config[name]);
    }
    return dial;
  }

  /** The environment's PBX-events settings as the PBX-events form posts them back; none: not followed. */
  private environmentFollow(): Record<string, string> | undefined {
    const config = this.config;
    if (!config.PBX_EVENTS && !config.ASTERISK_CDR_URL) return undefined;
    const follow: Record<string, string> = { PBX_EVENTS: config.PBX_EVENTS ?? '' };
    if (config.PBX_EVENTS === 'ami' && config.AMI_URL) follow.AMI_URL = config.AMI_URL;
    if (config.PBX_EVENTS === 'esl' && config.ESL_URL) follow.ESL_URL = config.ESL_URL;
    if (config.ASTERISK_CDR_URL) follow.ASTERISK_CDR_URL = config.ASTERISK_CDR_URL;
    if (config.PBX_TRUNKS.length) follow.PBX_TRUNKS = config.PBX_TRUNKS.join(',');
    return follow;
  }
}

/** Whether a posted block of settings is these (the same names and values, in any order). */
function sameSettings(posted: unknown, environment: Record<string, string> | undefined): boolean {
  if (posted === undefined) return false;
  if (posted === null || environment === undefined) return posted === null && environment === undefined;
  if (typeof posted !== 'object') return false;
  const sorted = (value: object) =>
    JSON.stringify(Object.entries(value).sort(([a], [b]) => a.localeCompare(b)));
  return sorted(posted) === sorted(environment);
}
