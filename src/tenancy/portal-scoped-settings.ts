import { EgressPolicy } from '../common/egress';
import { OAuthSettings } from '../auth/oauth-settings';
import {
  AuthSettings,
  authorizationOf,
  DeliverySettings,
  DialSettings,
  EventSettings,
  FollowSettings,
  IntakeSettings,
  LookupSettings,
  PortalSettings,
  RecordingSettings,
} from '../config/settings';
import { PortalRecord } from '../store/portal-store';
import { lineBook } from '../common/lines';
import { portalDialSettings } from './portal-dial';
import { portalFollowSettings } from './portal-follow';

/** Numbers cached per portal at most (LOOKUP_CACHE_SIZE, when smaller): a portal's clients calling now. */
const PORTAL_CACHE_SIZE = 1000;

/**
 * The deployment's settings, as the environment gives them. Only `resolvePortalSettings` reads them: a
 * portal runtime receives a `PortalScopedSettings` and has no way to reach these (no AppConfig, no
 * deployment view), so a deployment value read for one portal's calls is a type error, not a review note.
 */
export interface DeploymentSettings {
  auth: AuthSettings;
  portal: PortalSettings;
  delivery: DeliverySettings;
  lookup: LookupSettings;
  recording: RecordingSettings;
  events: EventSettings;
  /** METRICS_PORTAL_LABEL=1: metrics carry each portal's id. */
  portalLabel: boolean;
  /** NODE_ENV=production: a portal's PBX is followed over TLS or at a private address only. */
  production: boolean;
  /** What a portal's own settings may reach (SPEC §8: TENANT_ALLOWED_NETWORKS, TLS for credentials). */
  egress: EgressPolicy;
  /** PBX_INTERNAL_MAX_DIGITS and ASTERISK_RECORDING_URL: how a followed PBX's numbers and files are read. */
  intake: Pick<IntakeSettings, 'internalMaxDigits' | 'recordingUrls' | 'timeZone'>;
}

/**
 * Everything one portal's runtime reads, resolved for that portal. The rule of each setting (per portal,
 * else the deployment's default; per portal only; deployment only) is in `resolvePortalSettings` and in
 * docs/decisions/tenancy.md.
 */
export interface PortalScopedSettings {
  readonly portalId: string;
  /**
   * How the portal is reached: its OAuth pair (the published application's credentials, the portal's own
   * endpoint), or, for the one portal of single mode, the environment's B24_WEBHOOK_URL (a secret).
   */
  readonly access: { oauth: OAuthSettings } | { webhookUrl: string };
  readonly portal: PortalSettings;
  readonly lookup: LookupSettings;
  readonly delivery: DeliverySettings;
  readonly recording: RecordingSettings;
  readonly events: EventSettings;
  /** Click-to-call; undefined when the portal has none (or its settings cannot be built: see `problems`). */
  readonly dial?: DialSettings;
  /** Following the portal's PBX; undefined when it has none (or its settings cannot be built: see `problems`). */
  readonly follow?: FollowSettings;
  /** How followed events are read: the deployment's PBX_INTERNAL_MAX_DIGITS and ASTERISK_RECORDING_URL. */
  readonly followReading: {
    internalMaxDigits: number;
    recordingTemplate?: string;
    freeswitchRecordingTemplate?: string;
    /** PBX_TIME_ZONE: the zone of the ledger's local times. */
    timeZone: string;
  };
  /**
   * What the portal's own settings may reach (SPEC §8; the deployment's rule): every connection made for
   * them (its followers' too) goes through a Destination of it.
   */
  readonly egress: EgressPolicy;
  /** The portal's own MISSED_CALL_TASK; undefined: the deployment's. */
  readonly missedCallTask?: boolean;
  /**
   * Its recorded calls are transcribed when the deployment has TRANSCRIBE_URL (SPEC §12): the portal's own
   * `transcribe`, else off in multi mode and on for single mode's one portal.
   */
  readonly transcribe: boolean;
  /** The portal's own DEFAULT_COUNTRY; undefined: the deployment's. */
  readonly defaultCountry?: string;
  /** The metric label of this portal's series: its id with METRICS_PORTAL_LABEL=1, else `all`. */
  readonly metricsLabel: string;
  /** What of the portal's own settings could not be used (no value, no secret): its health shows them. */
  readonly problems: readonly string[];
}

/**
 * What the environment gives the seeded portal beyond the deployment's views that every portal's settings
 * are layered over (`resolvePortalSettings`): how it is reached, and its click-to-call, followed PBX and
 * recording downloads, which with many portals are each portal's own only.
 */
export interface SeedDefaults {
  access: PortalScopedSettings['access'];
  /** Always built: with DIAL_MODE unset it subscribes to nothing, and readiness shows it off. */
  dial: DialSettings;
  follow?: FollowSettings;
  recordingFetch: Pick<RecordingSettings, 'fetchHosts' | 'fetchAuthorization'>;
}

/**
 * One portal's settings from its record and the deployment's: each by its rule. `seed`: single mode's one
 * portal, whose stored settings are layered over the environment's the same way, with the environment's
 * access, click-to-call, followed PBX and recording downloads as the defaults a stored value replaces.
 */
export function resolvePortalSettings(
  record: PortalRecord,
  deployment: DeploymentSettings,
  seed?: SeedDefaults,
): PortalScopedSettings {
  const own = record.settings;
  const problems: string[] = [];
  // Per portal, else the deployment's: the portal's plan (its REST budget).
  const portal: PortalSettings = Object.freeze({
    ...deployment.portal,
    rateLimitRps: own.rateLimitRps ?? deployment.portal.rateLimitRps,
    burst: own.rateBurst ?? deployment.portal.burst,
  });
  // Per portal, else the deployment's: how its CRM is searched and what it binds.
  const lookup: LookupSettings = Object.freeze({
    ...deployment.lookup,
    bindCrmEntity: own.bindCrmEntity ?? deployment.lookup.bindCrmEntity,
    defaultCountry: own.defaultCountry ?? deployment.lookup.defaultCountry,
    // The cache preallocates room for all its entries: 10 000 a portal would be 400 KB each of a thousand.
    // Single mode's one portal has the whole LOOKUP_CACHE_SIZE.
    cacheSize: seed ? deployment.lookup.cacheSize : Math.min(deployment.lookup.cacheSize, PORTAL_CACHE_SIZE),
  });
  const defaultUserId = own.defaultUserId ?? deployment.delivery.defaultUserId;
  let dial: DialSettings | undefined;
  if (own.dial) {
    const built = portalDialSettings(own.dial, defaultUserId, deployment.egress);
    if ('settings' in built) dial = built.settings;
    else problems.push(`click-to-call is off: ${built.problems.join('; ')}`);
    // Stored before the rule (or since refused by it): kept, and each click fails at once with the reason.
    if ('settings' in built && built.refusals.length) {
      problems.push(`click-to-call fails every click: ${built.refusals.join('; ')}`);
    }
  } else if (seed) {
    // The environment's, with the portal's own default employee for callbacks nobody is responsible for.
    dial = Object.freeze({ ...seed.dial, defaultUserId });
  }
  // Per portal only: a PBX and its Manager secret belong to one tenant (PBX_EVENTS is refused in the env).
  let follow: FollowSettings | undefined;
  if (own.follow) {
    const built = portalFollowSettings(own.follow, {
      production: deployment.production,
      egress: deployment.egress,
    });
    if ('settings' in built) follow = built.settings;
    else problems.push(`the PBX is not followed: ${built.problems.join('; ')}`);
  } else if (seed) {
    follow = seed.follow;
  }
  const missedCallDeadlineMs =
    own.missedCallTask === false
      ? undefined
      : own.missedCallTask
        ? deployment.delivery.missedCallTaskWindowMs
        : deployment.delivery.missedCallTaskDeadlineMs;
  const delivery: DeliverySettings = Object.freeze({
    ...deployment.delivery,
    defaultUserId,
    missedCallTaskDeadlineMs: missedCallDeadlineMs,
    // The portal's own DIAL_MATCH_SEC where its dial settings name one, else the deployment's.
    dialMatchMs:
      dial && own.dial?.DIAL_MATCH_SEC !== undefined ? dial.matchMs : deployment.delivery.dialMatchMs,
    // Per portal, else the deployment's (LINES is refused in multi mode: a tenant's numbers are its own);
    // the calls' lines fall back to the portal's line number, else B24_LINE_NUMBER.
    lines: lineBook(
      own.lines ?? deployment.delivery.lines.rules,
      own.lineNumber ?? deployment.events.lineNumber,
      own.defaultCountry ?? deployment.lookup.defaultCountry,
    ),
  });
  // Per portal only: a download host and its credential belong to one tenant's PBX. The deployment's
  // RECORDING_FETCH_HOSTS/AUTH are refused at start-up in multi mode and never read here.
  const ownFetch = own.recordingFetch && {
    fetchHosts: own.recordingFetch.hosts,
    fetchAuthorization: authorizationOf(own.recordingFetch.auth),
  };
  const fetch = ownFetch ?? seed?.recordingFetch;
  const recording: RecordingSettings = Object.freeze({
    fetchHosts: Object.freeze([...(fetch?.fetchHosts ?? [])]),
    fetchAuthorization: fetch?.fetchAuthorization,
    // Deployment only: what the process can hold and the portal's upload limit are the same for every tenant.
    maxBytes: deployment.recording.maxBytes,
    waitMs: deployment.recording.waitMs,
    requestMaxBytes: deployment.recording.requestMaxBytes,
    // Deployment only: one quota per portal and one expiry, the same for every tenant (RECORDING_QUOTA_MB,
    // RECORDING_KEEP_HOURS).
    quotaBytes: deployment.recording.quotaBytes,
    keepMs: deployment.recording.keepMs,
  });
  // Deployment only: the bridge's own address and how it hears events; per portal, else B24_LINE_NUMBER.
  const events: EventSettings = Object.freeze({
    ...deployment.events,
    lineNumber: own.lineNumber ?? deployment.events.lineNumber,
  });
  const { auth } = deployment;
  return Object.freeze({
    portalId: record.portalId,
    // Deployment only: the one published application's credentials; the portal's own endpoint. The seeded
    // portal's: the environment's webhook or OAuth pair.
    access: seed?.access ?? {
      oauth: {
        portalId: record.portalId,
        portalUrl: new URL(record.clientEndpoint).origin,
        oauthUrl: new URL(auth.oauthUrl ?? 'http://unset.invalid').origin,
        clientId: auth.clientId ?? '',
        clientSecret: auth.clientSecret ?? '',
        publicUrl: auth.publicUrl?.replace(/\/+$/, ''),
        apiVersion: deployment.portal.apiVersion,
        stateTtlMs: auth.stateTtlMs,
        timeoutMs: deployment.portal.timeoutMs,
      },
    },
    portal,
    lookup,
    delivery,
    recording,
    events,
    dial,
    follow,
    followReading: {
      internalMaxDigits: deployment.intake.internalMaxDigits,
      recordingTemplate: deployment.intake.recordingUrls.asterisk,
      freeswitchRecordingTemplate: deployment.intake.recordingUrls.freeswitch,
      timeZone: deployment.intake.timeZone,
    },
    egress: deployment.egress,
    missedCallTask: own.missedCallTask,
    transcribe: own.transcribe ?? seed !== undefined,
    defaultCountry: own.defaultCountry,
    // The one portal of single mode is always labelled with its id.
    metricsLabel: deployment.portalLabel || seed ? record.portalId : 'all',
    problems: Object.freeze(problems),
  });
}
