import { allowedNetworksOf, EgressPolicy } from '../common/egress';
import { AppConfig, LogLevel } from './app-config';

/*
 * Typed views of the validated configuration, one per concern, in the units the code works in (ms, bytes):
 * each variable's unit is converted here, once. Each abstract class is the injection token of its view
 * (`constructor(private readonly delivery: DeliverySettings)`), provided by ConfigurationModule; the
 * `…Of(config)` functions are pure, so unit specs build a view from `loadConfig(env)` without Nest.
 */

const SECOND_MS = 1000;
const DAY_MS = 86_400_000;

/** The HTTP server and the process (PORT, NODE_ENV, SHUTDOWN_DELAY_MS). */
export abstract class ServerSettings {
  abstract readonly port: number;
  abstract readonly environment: AppConfig['NODE_ENV'];
  /** NODE_ENV=production: the API documentation takes ADMIN_TOKEN, risky settings are refused. */
  abstract readonly production: boolean;
  /** On SIGTERM: how long readiness reports false before the server stops taking connections. */
  abstract readonly shutdownDelayMs: number;
}

/** The tokens callers present (PBX_TOKENS, ADMIN_TOKEN, METRICS_TOKEN); never logged. */
export abstract class SecuritySettings {
  abstract readonly pbxTokens: readonly string[];
  /** unset: /v1/admin (and, in production, the API documentation) refuse everyone. */
  abstract readonly adminToken?: string;
  /** unset: GET /metrics is open. */
  abstract readonly metricsToken?: string;
}

/** What PBXs post and how it is read (PBX_*, DEFAULT_COUNTRY). */
export abstract class IntakeSettings {
  abstract readonly bodyLimitBytes: number;
  /** Writes (posts, recordings) per second per PBX token before 429. */
  abstract readonly rateLimitRps: number;
  /** Reads (call status, lookups) per second per PBX token before 429, counted apart from writes. */
  abstract readonly readRateLimitRps: number;
  /** IANA zone of PBXs that post local times. */
  abstract readonly timeZone: string;
  /** Without `direction`: a number of at most this many digits is an internal extension. */
  abstract readonly internalMaxDigits: number;
  /** ISO 3166 alpha-2 country of national numbers; unset: only international numbers are understood. */
  abstract readonly defaultCountry?: string;
  /** *_RECORDING_URL: where each PBX serves recordings it names by file (base URL or `{file}`/`{path}` template). */
  abstract readonly recordingUrls: Readonly<{ yeastar?: string; asterisk?: string; freeswitch?: string }>;
}

/** Delivery to the portal and a call's life (DELIVERY_*, HOLD_ENDED_WITHOUT_START_SEC, B24_DEFAULT_USER_ID). */
export abstract class DeliverySettings {
  /** The portal user of calls whose employee is unknown. */
  abstract readonly defaultUserId?: number;
  abstract readonly maxBackoffMs: number;
  /** Refusals of one step before its call is parked. */
  abstract readonly maxAttempts: number;
  /** How long a replica's delivery lease lasts without renewal. */
  abstract readonly leaseMs: number;
  /** How long a call.ended without its call.started waits for it. */
  abstract readonly holdEndedWithoutStartMs: number;
  /** The most batches in flight to the portal at once. */
  abstract readonly maxInFlight: number;
  /**
   * MISSED_CALL_TASK: from the end of a missed inbound call to its task's deadline
   * (MISSED_CALL_TASK_DEADLINE_MIN); undefined when missed calls make no task.
   */
  abstract readonly missedCallTaskDeadlineMs?: number;
  /** MISSED_CALL_TASK_DEADLINE_MIN whether or not the deployment makes tasks: a portal may turn them on for itself. */
  abstract readonly missedCallTaskWindowMs: number;
  /** DIAL_MATCH_SEC: how long after a click the PBX's call from that extension to that number is its call. */
  abstract readonly dialMatchMs: number;
}

/** The portal's REST API: budget, requests, redirects (B24_RATE_*, B24_BATCH_SIZE, B24_TIMEOUT_MS, …). */
export abstract class PortalSettings {
  /** The portal's leaky bucket: drain rate (requests per second) and size. */
  abstract readonly rateLimitRps: number;
  abstract readonly burst: number;
  /** Per-request timeout towards the portal and its token endpoint. */
  abstract readonly timeoutMs: number;
  /** Commands per `batch` request. */
  abstract readonly batchSize: number;
  /** Domains a 3xx may move to besides the portal's own registrable domain. */
  abstract readonly allowedDomains: readonly string[];
  abstract readonly apiVersion?: 'v1';
  /** The portal's operating-time limit per method: server seconds allowed within the sliding window. */
  abstract readonly operatingLimitSec: number;
  abstract readonly operatingWindowMs: number;
}

/** How the portal is addressed and authorised (B24_AUTH_MODE, B24_WEBHOOK_URL, OAuth settings). */
export abstract class AuthSettings {
  /** B24_AUTH_MODE, else inferred: a portal URL without a webhook means OAuth. */
  abstract readonly mode: 'webhook' | 'oauth';
  abstract readonly webhookUrl?: string;
  abstract readonly portalUrl?: string;
  abstract readonly clientId?: string;
  abstract readonly clientSecret?: string;
  abstract readonly oauthUrl?: string;
  abstract readonly publicUrl?: string;
  /** How long a `state` handed out by /oauth/start is accepted. */
  abstract readonly stateTtlMs: number;
}

/** CRM lookups and the employee directory (LOOKUP_*, EMPLOYEE_REFRESH_SEC, B24_BIND_CRM_ENTITY). */
export abstract class LookupSettings {
  /** A cache miss's wait for the portal, the wait for the budget included. */
  abstract readonly deadlineMs: number;
  abstract readonly cacheTtlMs: number;
  abstract readonly cacheSize: number;
  abstract readonly employeeRefreshMs: number;
  /** A registered call is bound to the CRM client the lookup finds. */
  abstract readonly bindCrmEntity: boolean;
  abstract readonly defaultCountry?: string;
}

/** The database (DATABASE_URL, DATABASE_POOL_SIZE, RETENTION_DAYS). */
export abstract class StoreSettings {
  /** `sqlite:PATH` (default `sqlite:./data/bridge.sqlite`, relative to the working directory) or `postgres://…`. */
  abstract readonly databaseUrl: string;
  /** PostgreSQL connections per replica. */
  abstract readonly poolSize: number;
  /** Settled calls unchanged for this long are deleted; `retentionDays` is the same, for messages. */
  abstract readonly retentionMs: number;
  abstract readonly retentionDays: number;
  /** How long an uninstalled portal's data is kept (PORTAL_RETENTION_DAYS). */
  abstract readonly portalRetentionMs: number;
}

/** Recordings the bridge downloads or is pushed, and uploads (RECORDING_*, the API contract (docs/API.md)). */
export abstract class RecordingSettings {
  /** Host patterns downloads may go to: `host`, `host:port`, `*.suffix`. Empty: nothing is downloaded. */
  abstract readonly fetchHosts: readonly string[];
  /** The download's Authorization header value (a secret), or undefined. */
  abstract readonly fetchAuthorization?: string;
  abstract readonly maxBytes: number;
  /** How long after the call ended a recording not there yet is retried. */
  abstract readonly waitMs: number;
  /** File content bytes (base64) one portal request may carry. */
  abstract readonly requestMaxBytes: number;
  /** RECORDING_QUOTA_MB: the most recording bytes one portal may have waiting in the store; undefined: no limit. */
  abstract readonly quotaBytes?: number;
  /** RECORDING_KEEP_HOURS: a recording still held this long after it was stored is deleted. */
  abstract readonly keepMs: number;
}

/** Click-to-call (DIAL_*, AMI_*, ESL_*, the API contract (docs/API.md)). URLs and auth are secrets: never logged. */
export abstract class DialSettings {
  /** undefined: click-to-call is off. */
  abstract readonly mode?: 'ami' | 'esl' | 'http';
  abstract readonly amiUrl?: string;
  abstract readonly amiChannel: string;
  abstract readonly amiContext: string;
  abstract readonly eslUrl?: string;
  abstract readonly eslOriginate: string;
  abstract readonly url?: string;
  abstract readonly method: 'POST' | 'GET';
  /** The Authorization header value of DIAL_URL (a secret), or undefined. */
  abstract readonly authorization?: string;
  /** From the click: how long the PBX is retried before the portal's call is finished as failed. */
  abstract readonly timeoutMs: number;
  abstract readonly matchMs: number;
  /** The employee of a callback whose client has no responsible one (B24_DEFAULT_USER_ID). */
  abstract readonly defaultUserId?: number;
}

/** Following the PBX (PBX_EVENTS, AMI_URL, ESL_URL, PBX_TRUNKS; docs/API.md). The URLs are secrets: never logged. */
export abstract class FollowSettings {
  /** undefined: posted events only. */
  abstract readonly mode?: 'ami' | 'esl';
  abstract readonly amiUrl?: string;
  /** ASTERISK_CDR_URL, the CDR ledger (a secret: never logged); with or without `mode`. */
  abstract readonly cdrUrl?: string;
  abstract readonly eslUrl?: string;
  /** Channel-name patterns of trunks; empty: endpoints named by internal numbers are phones. */
  abstract readonly trunks: readonly string[];
}

/** OAuth mode's portal events (B24_EVENTS, B24_LINE_NUMBER, PUBLIC_URL): what the event binder needs. */
export abstract class EventSettings {
  /** B24_EVENTS=offline: events are polled (`event.offline.get`), not posted to PUBLIC_URL. */
  abstract readonly offline: boolean;
  /** The line the bridge registers (`telephony.externalLine.add`). */
  abstract readonly lineNumber: string;
  /** Where the portal posts events (`PUBLIC_URL/v1/portal/events`); unset: nothing is bound online. */
  abstract readonly publicUrl?: string;
}

export abstract class LoggingSettings {
  /** pino's or Nest's level name, as LOG_LEVEL gives it. */
  abstract readonly level: LogLevel;
  /** LOG_FORMAT; unset: pretty when stdout is a terminal. */
  abstract readonly format: 'json' | 'pretty';
}

export const serverSettingsOf = (config: AppConfig): ServerSettings =>
  Object.freeze({
    port: config.PORT,
    environment: config.NODE_ENV,
    production: config.NODE_ENV === 'production',
    shutdownDelayMs: config.SHUTDOWN_DELAY_MS,
  });

export const securitySettingsOf = (config: AppConfig): SecuritySettings =>
  Object.freeze({
    pbxTokens: Object.freeze([...config.PBX_TOKENS]),
    adminToken: config.ADMIN_TOKEN,
    metricsToken: config.METRICS_TOKEN,
  });

export const intakeSettingsOf = (config: AppConfig): IntakeSettings =>
  Object.freeze({
    bodyLimitBytes: config.PBX_BODY_LIMIT,
    rateLimitRps: config.PBX_RATE_LIMIT_RPS,
    readRateLimitRps: config.PBX_READ_RATE_LIMIT_RPS,
    timeZone: config.PBX_TIME_ZONE,
    internalMaxDigits: config.PBX_INTERNAL_MAX_DIGITS,
    defaultCountry: config.DEFAULT_COUNTRY,
    recordingUrls: Object.freeze({
      yeastar: config.YEASTAR_RECORDING_URL,
      asterisk: config.ASTERISK_RECORDING_URL,
      freeswitch: config.FREESWITCH_RECORDING_URL,
    }),
  });

export const deliverySettingsOf = (config: AppConfig): DeliverySettings =>
  Object.freeze({
    defaultUserId: config.B24_DEFAULT_USER_ID,
    maxBackoffMs: config.DELIVERY_MAX_BACKOFF_SEC * SECOND_MS,
    maxAttempts: config.DELIVERY_MAX_ATTEMPTS,
    leaseMs: config.DELIVERY_LEASE_SEC * SECOND_MS,
    holdEndedWithoutStartMs: config.HOLD_ENDED_WITHOUT_START_SEC * SECOND_MS,
    maxInFlight: config.DELIVERY_MAX_IN_FLIGHT,
    missedCallTaskDeadlineMs: config.MISSED_CALL_TASK
      ? config.MISSED_CALL_TASK_DEADLINE_MIN * 60 * SECOND_MS
      : undefined,
    missedCallTaskWindowMs: config.MISSED_CALL_TASK_DEADLINE_MIN * 60 * SECOND_MS,
    dialMatchMs: config.DIAL_MATCH_SEC * SECOND_MS,
  });

export const portalSettingsOf = (config: AppConfig): PortalSettings =>
  Object.freeze({
    rateLimitRps: config.B24_RATE_LIMIT_RPS,
    burst: config.B24_RATE_BURST,
    timeoutMs: config.B24_TIMEOUT_MS,
    batchSize: config.B24_BATCH_SIZE,
    allowedDomains: Object.freeze([...config.B24_ALLOWED_DOMAINS]),
    apiVersion: config.B24_API_VERSION,
    operatingLimitSec: config.B24_OPERATING_LIMIT_SEC,
    operatingWindowMs: config.B24_OPERATING_WINDOW_SEC * SECOND_MS,
  });

export const authSettingsOf = (config: AppConfig): AuthSettings =>
  Object.freeze({
    mode: config.authMode,
    webhookUrl: config.B24_WEBHOOK_URL,
    portalUrl: config.B24_PORTAL_URL,
    clientId: config.B24_CLIENT_ID,
    clientSecret: config.B24_CLIENT_SECRET,
    oauthUrl: config.B24_OAUTH_URL,
    publicUrl: config.PUBLIC_URL,
    stateTtlMs: config.OAUTH_STATE_TTL_SEC * SECOND_MS,
  });

export const lookupSettingsOf = (config: AppConfig): LookupSettings =>
  Object.freeze({
    deadlineMs: config.LOOKUP_DEADLINE_MS,
    cacheTtlMs: config.LOOKUP_CACHE_TTL_SEC * SECOND_MS,
    cacheSize: config.LOOKUP_CACHE_SIZE,
    employeeRefreshMs: config.EMPLOYEE_REFRESH_SEC * SECOND_MS,
    bindCrmEntity: config.B24_BIND_CRM_ENTITY,
    defaultCountry: config.DEFAULT_COUNTRY,
  });

export const storeSettingsOf = (config: AppConfig): StoreSettings =>
  Object.freeze({
    databaseUrl: config.DATABASE_URL ?? 'sqlite:./data/bridge.sqlite',
    poolSize: config.DATABASE_POOL_SIZE,
    retentionMs: config.RETENTION_DAYS * DAY_MS,
    retentionDays: config.RETENTION_DAYS,
    portalRetentionMs: config.PORTAL_RETENTION_DAYS * DAY_MS,
  });

export const recordingSettingsOf = (config: AppConfig): RecordingSettings =>
  Object.freeze({
    fetchHosts: Object.freeze([...config.RECORDING_FETCH_HOSTS]),
    fetchAuthorization: authorizationOf(config.RECORDING_FETCH_AUTH),
    maxBytes: config.RECORDING_MAX_MB * 1_000_000,
    waitMs: config.RECORDING_WAIT_SEC * 1000,
    requestMaxBytes: Math.floor(config.RECORDING_REQUEST_MAX_MB * 1_000_000),
    quotaBytes: config.RECORDING_QUOTA_MB > 0 ? config.RECORDING_QUOTA_MB * 1_000_000 : undefined,
    keepMs: config.RECORDING_KEEP_HOURS * 3_600_000,
  });

/** `basic:user:password` → `Basic base64(user:password)`; `bearer:token` → `Bearer token`. */
export function authorizationOf(auth: string | undefined): string | undefined {
  if (!auth) return undefined;
  if (auth.startsWith('bearer:')) return `Bearer ${auth.slice('bearer:'.length)}`;
  return `Basic ${Buffer.from(auth.slice('basic:'.length)).toString('base64')}`;
}

export const dialSettingsOf = (config: AppConfig): DialSettings =>
  Object.freeze({
    mode: config.DIAL_MODE,
    amiUrl: config.AMI_URL,
    amiChannel: config.AMI_CHANNEL,
    amiContext: config.AMI_CONTEXT,
    eslUrl: config.ESL_URL,
    eslOriginate: config.ESL_ORIGINATE,
    url: config.DIAL_URL,
    method: config.DIAL_METHOD,
    authorization: authorizationOf(config.DIAL_AUTH),
    timeoutMs: config.DIAL_TIMEOUT_SEC * SECOND_MS,
    matchMs: config.DIAL_MATCH_SEC * SECOND_MS,
    defaultUserId: config.B24_DEFAULT_USER_ID,
  });

export const followSettingsOf = (config: AppConfig): FollowSettings =>
  Object.freeze({
    mode: config.PBX_EVENTS,
    amiUrl: config.AMI_URL,
    cdrUrl: config.ASTERISK_CDR_URL,
    eslUrl: config.ESL_URL,
    trunks: Object.freeze([...config.PBX_TRUNKS]),
  });

export const eventSettingsOf = (config: AppConfig): EventSettings =>
  Object.freeze({
    offline: config.B24_EVENTS === 'offline',
    lineNumber: config.B24_LINE_NUMBER,
    publicUrl: config.PUBLIC_URL,
  });

export const loggingSettingsOf = (config: AppConfig): LoggingSettings =>
  Object.freeze({
    level: config.LOG_LEVEL,
    format: config.LOG_FORMAT ?? (process.stdout.isTTY ? 'pretty' : 'json'),
  });

/**
 * The rule for what a portal's own settings may reach (SPEC §8): in multi mode, tenants' destinations under
 * TENANT_ALLOWED_NETWORKS, never this deployment's own name (PUBLIC_URL's host); in single mode the one
 * portal's settings are the operator's, unrestricted.
 */
export function tenantEgressOf(config: AppConfig): EgressPolicy {
  if (config.B24_APP_MODE !== 'multi') return EgressPolicy.unrestricted();
  const allowed = allowedNetworksOf(config.TENANT_ALLOWED_NETWORKS);
  if ('problem' in allowed) throw new Error(allowed.problem);
  const ownHosts = [config.PUBLIC_URL, config.B24_PORTAL_URL].flatMap((url) => {
    try {
      return url ? [new URL(url).hostname] : [];
    } catch {
      return [];
    }
  });
  return EgressPolicy.forTenants(allowed, ownHosts);
}

/**
 * Every view under its namespace: what ConfigService holds (`config.get('delivery', { infer: true })`,
 * typed with `ConfigService<BridgeSettings, true>`).
 */
export interface BridgeSettings {
  server: ServerSettings;
  security: SecuritySettings;
  intake: IntakeSettings;
  delivery: DeliverySettings;
  portal: PortalSettings;
  auth: AuthSettings;
  lookup: LookupSettings;
  store: StoreSettings;
  logging: LoggingSettings;
  recording: RecordingSettings;
  dial: DialSettings;
  follow: FollowSettings;
  events: EventSettings;
}

/** The namespaces, each with its token and its view function: ConfigurationModule provides them all. */
export const SETTINGS = {
  server: { token: ServerSettings, of: serverSettingsOf },
  security: { token: SecuritySettings, of: securitySettingsOf },
  intake: { token: IntakeSettings, of: intakeSettingsOf },
  delivery: { token: DeliverySettings, of: deliverySettingsOf },
  portal: { token: PortalSettings, of: portalSettingsOf },
  auth: { token: AuthSettings, of: authSettingsOf },
  lookup: { token: LookupSettings, of: lookupSettingsOf },
  store: { token: StoreSettings, of: storeSettingsOf },
  logging: { token: LoggingSettings, of: loggingSettingsOf },
  recording: { token: RecordingSettings, of: recordingSettingsOf },
  dial: { token: DialSettings, of: dialSettingsOf },
  follow: { token: FollowSettings, of: followSettingsOf },
  events: { token: EventSettings, of: eventSettingsOf },
} as const;

/** All views of one validated configuration, derived once and frozen. */
export function settingsOf(config: AppConfig): Readonly<BridgeSettings> {
  const entries = Object.entries(SETTINGS).map(([name, { of }]) => [name, of(config)]);
  return Object.freeze(Object.fromEntries(entries) as BridgeSettings);
}
