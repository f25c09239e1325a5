import { LineRule } from '../common/lines';
import { PortalBudget } from '../portal/budget-waiters';
import { SettingProblem } from '../tenancy/portal-settings-check';

/** One line of the connection state: what it is, whether it works (null: not set up), and why not. */
export interface ConnectionLine {
  key: 'portalState' | 'delivery' | 'events' | 'pbxFollow' | 'dialer';
  ok: boolean | null;
  detail: string;
  /** The events line said as a sentence in the page's language (how events come, the line calls go on). */
  events?: { mode: 'webhook' | 'online' | 'offline'; line?: string; bound?: number };
}

export interface PageEmployee {
  id: number;
  name: string;
  extension?: string;
}

/**
 * Dial settings as the page shows them: the mode, the plain values (AMI_CHANNEL…), and the secrets that are
 * set, each with its address without credentials (empty for DIAL_AUTH): never a password.
 */
export interface PageDial {
  DIAL_MODE: string;
  values: Record<string, string>;
  set: Record<string, string>;
}

/** PBX-events settings as the page shows them: the mode (`ami`, `ami+cdr`, `esl`, `cdr`), trunks, addresses set. */
export interface PageFollow {
  mode: string;
  PBX_TRUNKS: string;
  set: Record<string, string>;
}

/** The settings the page shows, never a secret. */
export interface PageSettings {
  editable: boolean;
  defaultUserId?: number;
  defaultCountry?: string;
  missedCallTask?: boolean;
  /** Transcripts of the portal's recorded calls (SPEC §12); unset: the default (on in single mode, else off). */
  transcribe?: boolean;
  lineNumber?: string;
  /** The lines' rules (`lines`; one portal: LINES). */
  lines?: LineRule[];
  dial: PageDial | null;
  follow: PageFollow | null;
  /** Single mode: what an empty choice means (the environment's values), shown beside each field. */
  environment?: {
    defaultUserId?: number;
    defaultCountry?: string;
    missedCallTask?: boolean;
    transcribe?: boolean;
    lineNumber?: string;
  };
}

export interface PageToken {
  id: string;
  label: string | null;
  createdAt: string;
  /** One of PBX_TOKENS (single mode): listed, never shown, revoked by removing it there. */
  fromEnvironment?: boolean;
}

/** What the page knows of its portal, from the store: the portal is who installed, not who posts. */
export interface PagePortal {
  portalId: string;
  domain: string;
  /** The REST base the verified install named: where the page asks who holds an AUTH_ID. */
  clientEndpoint: string;
  active: boolean;
  /**
   * What changes when the portal installs the application again (multi: its install time; one portal with
   * OAuth: its application token's digest): a page session opened under another install is over.
   */
  installation: string;
  /**
   * The installed portal's `member_id`, where the page's portal is not found by it (one portal with OAuth):
   * a post naming another is refused.
   */
  memberId?: string;
}

/**
 * Where the application's page reads and changes one portal's state: the portal registry with many portals
 * (`B24_APP_MODE=multi`), the environment's one portal otherwise (its stored settings over the environment's).
 */
export abstract class PageSource {
  abstract portal(portalId: string): Promise<PagePortal | undefined>;

  /**
   * The portal's request budget, which the page's own requests to it (who holds an AUTH_ID, is the user
   * still an administrator) wait on like every other request; undefined where there is none (webhook mode).
   */
  abstract budget(portalId: string): Promise<PortalBudget | undefined>;

  abstract connection(portalId: string): Promise<ConnectionLine[]>;

  /** Active employees; undefined when the portal cannot be read now. */
  abstract employees(portalId: string): Promise<PageEmployee[] | undefined>;

  abstract settings(portalId: string): Promise<PageSettings>;

  /** Checks a settings patch as the admin API does, storing nothing (a "test connection"). */
  abstract checkSettings(
    patch: Record<string, unknown>,
  ): { errors: SettingProblem[] } | { patch: Record<string, unknown> };

  /** Checks (as the admin API does) and stores a settings patch, effective without a restart. */
  abstract updateSettings(
    portalId: string,
    patch: Record<string, unknown>,
  ): Promise<{ errors: SettingProblem[] } | { changed: string[] }>;

  /** The portal's PBX tokens (one portal: PBX_TOKENS too, `fromEnvironment`); null where there are none. */
  abstract tokens(portalId: string): Promise<PageToken[] | null>;

  /** The new token (shown once) and its id (what the audit line and the list name). */
  abstract createToken(
    portalId: string,
    label: string | undefined,
  ): Promise<{ id: string; token: string } | undefined>;

  abstract revokeToken(portalId: string, id: string): Promise<boolean>;

  /** The stored dial settings (with their secrets), for a connection test that keeps an address unchanged. */
  abstract storedDial(portalId: string): Promise<Record<string, string> | undefined>;

  /** The stored PBX-events settings (with their secrets), likewise. */
  abstract storedFollow(portalId: string): Promise<Record<string, string> | undefined>;
}
