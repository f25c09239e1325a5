import { PortalTokens } from './token-store';
import { LineRule } from '../common/lines';

/**
 * The portals one deployment serves (docs/API.md): in `B24_APP_MODE=multi` every install of the published
 * application is a portal record, keyed by the portal's `member_id`, with its own settings and PBX
 * credentials. Tokens stay in `TokenStore` under the same id.
 */

/** What an operator may set per portal (`PATCH /v1/admin/portals/:portalId`); unset means the deployment's. */
export interface PortalOwnSettings {
  defaultUserId?: number;
  defaultCountry?: string;
  bindCrmEntity?: boolean;
  missedCallTask?: boolean;
  /** The portal's plan: its request budget (2/s burst 50 by default; large plans 5/s, 250). */
  rateLimitRps?: number;
  rateBurst?: number;
  /**
   * Click-to-call to this portal's PBX: the dial settings under their variable names (`DIAL_MODE`, `AMI_URL`,
   * `ESL_URL`, `DIAL_URL`, `DIAL_AUTH`, …, the API contract (docs/API.md)), checked as the environment's are. Holds secrets:
   * never shown back.
   */
  dial?: Record<string, string>;
  /**
   * Where this portal's PBX recordings may be downloaded from, and with what credentials (`auth`:
   * `basic:user:password` or `bearer:token`, a secret: never shown back). Unset: nothing is downloaded for
   * the portal (the deployment's RECORDING_FETCH_* are refused in multi mode: they would serve every tenant).
   */
  recordingFetch?: { hosts: string[]; auth?: string };
  /** The line registered on the portal (`telephony.externalLine.add`); unset: B24_LINE_NUMBER. */
  lineNumber?: string;
  /** The portal's lines and their rules (docs/API.md "Lines", as LINES), checked by `checkLineRules`; unset: none. */
  lines?: LineRule[];
  /**
   * Following this portal's PBX (docs/API.md): `PBX_EVENTS`, `AMI_URL`, `PBX_TRUNKS`, … under their variable
   * names, checked as the environment's are. Holds secrets: never shown back.
   */
  follow?: Record<string, string>;
  /**
   * Transcripts of this portal's recorded calls (SPEC §12: the deployment's TRANSCRIBE_URL); unset: off in
   * multi mode (a conversation is personal data), on for single mode's one portal.
   */
  transcribe?: boolean;
}

export type PortalStatus = 'active' | 'uninstalled';

export interface PortalRecord {
  /** The portal's `member_id`: it identifies the portal for good (the domain can change). */
  portalId: string;
  domain: string;
  /** The REST base the portal's verified install named (`https://portal.example.com/rest/`). */
  clientEndpoint: string;
  status: PortalStatus;
  installedAt: number;
  /** Set while uninstalled: data is deleted `PORTAL_RETENTION_DAYS` after it. */
  uninstalledAt?: number;
  settings: PortalOwnSettings;
  updatedAt: number;
}

/** A PBX credential of one portal; the token itself is never stored, only its SHA-256 digest. */
export interface PbxTokenRecord {
  id: string;
  portalId: string;
  label?: string;
  createdAt: number;
}

/** A verified install as `saveInstall` stores it. */
export interface PortalInstall {
  portalId: string;
  domain: string;
  clientEndpoint: string;
  now: number;
  grant: PortalTokens;
}

/** A change of a portal's own settings: a key set to null goes (back to the deployment's). */
export type SettingsPatch = { [K in keyof PortalOwnSettings]?: PortalOwnSettings[K] | null };

export abstract class PortalStore {
  /**
   * A verified install: creates the portal, or makes a known one active again with the new domain and
   * endpoint (its settings and PBX tokens stay), and stores its OAuth grant, in one transaction: a crash
   * leaves both or neither, never tokens without a served portal. The portal's row is written (and so
   * locked) first, so a purge of its earlier uninstall, conditioned on that row, either ran before (and the
   * install starts afresh) or finds it active again and deletes nothing. Returns the record as stored.
   */
  abstract saveInstall(install: PortalInstall): Promise<PortalRecord>;

  /** Uninstall: pauses the portal (status `uninstalled`, `uninstalledAt` = now). False when unknown. */
  abstract markUninstalled(portalId: string, now: number): Promise<boolean>;

  abstract findPortal(portalId: string): Promise<PortalRecord | undefined>;

  /**
   * Single mode's seeded portal: its row created if missing (`settings: {}`, active), its domain and endpoint
   * made the environment's if they changed (its settings and PBX tokens stay). Returns the stored record.
   */
  abstract ensurePortal(portal: {
    portalId: string;
    domain: string;
    clientEndpoint: string;
    now: number;
  }): Promise<PortalRecord>;

  /** A page of portals ordered by id, after `after` (exclusive), at most `limit`. */
  abstract listPortals(page: { after?: string; limit: number }): Promise<PortalRecord[]>;

  /** Every portal's id, status and last change: what each replica's runtime set follows. */
  abstract portalVersions(): Promise<Array<{ portalId: string; status: PortalStatus; updatedAt: number }>>;

  /**
   * Merges `patch` into the portal's settings (a key set to null removes it). Returns the record, or undefined
   * when unknown.
   */
  abstract updateSettings(
    portalId: string,
    patch: SettingsPatch,
    now: number,
  ): Promise<PortalRecord | undefined>;

  /** Stores a new PBX token's digest (hex SHA-256) for a known portal. False when the portal is unknown. */
  abstract addPbxToken(token: PbxTokenRecord & { digest: string }): Promise<boolean>;

  /** Revokes (deletes) one of the portal's PBX tokens. False when it has none with that id. */
  abstract revokePbxToken(portalId: string, id: string): Promise<boolean>;

  abstract listPbxTokens(portalId: string): Promise<PbxTokenRecord[]>;

  /**
   * The token with this digest, with its portal's status. The caller compares digests in constant time
   * (`common/secrets.ts`); the lookup by digest only finds the candidate.
   */
  abstract findPbxToken(
    digest: string,
  ): Promise<(PbxTokenRecord & { digest: string; status: PortalStatus }) | undefined>;

  /**
   * Deletes, in batches, every portal uninstalled before `before` with everything stored under its id (calls,
   * call events, tokens, PBX tokens, leases, budget, recordings, clicks, dial requests, portal events).
   * Returns the ids deleted.
   */
  abstract purgeUninstalled(before: number): Promise<string[]>;
}
