import { allowedNetworksOf, EgressPolicy } from '../common/egress';
import { AppConfig, LogLevel } from './app-config';
import {
  DeliverySettings,
  deliverySettingsOf,
  DialSettings,
  dialSettingsOf,
  EventSettings,
  eventSettingsOf,
  FollowSettings,
  followSettingsOf,
  IntakeSettings,
  intakeSettingsOf,
  LookupSettings,
  lookupSettingsOf,
  PortalSettings,
  portalSettingsOf,
  authorizationOf,
  RecordingSettings,
  recordingSettingsOf,
} from './portal-views';

export * from './portal-views';

/*
 * Typed views of the validated configuration, one per concern, in the units the code works in (ms, bytes):
 * each variable's unit is converted once, here or in portal-views.ts (the views a portal's runtime gets). Each abstract class is the injection token of its view
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

export const serverSettingsOf = (config: AppConfig): ServerSettings =>
  Object.freeze({
    port: config.PORT,
    environment: config.NODE_ENV,
    production: config.NODE_ENV === 'production',
    shutdownDelayMs: config.SHUTDOWN_DELAY_MS,
  });

/** The tokens callers present (PBX_TOKENS, ADMIN_TOKEN, METRICS_TOKEN); never logged. */
export abstract class SecuritySettings {
  abstract readonly pbxTokens: readonly string[];
  /** unset: /v1/admin (and, in production, the API documentation) refuse everyone. */
  abstract readonly adminToken?: string;
  /** unset: GET /metrics is open. */
  abstract readonly metricsToken?: string;
}

export const securitySettingsOf = (config: AppConfig): SecuritySettings =>
  Object.freeze({
    pbxTokens: Object.freeze([...config.PBX_TOKENS]),
    adminToken: config.ADMIN_TOKEN,
    metricsToken: config.METRICS_TOKEN,
  });

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

export const storeSettingsOf = (config: AppConfig): StoreSettings =>
  Object.freeze({
    databaseUrl: config.DATABASE_URL ?? 'sqlite:./data/bridge.sqlite',
    poolSize: config.DATABASE_POOL_SIZE,
    retentionMs: config.RETENTION_DAYS * DAY_MS,
    retentionDays: config.RETENTION_DAYS,
    portalRetentionMs: config.PORTAL_RETENTION_DAYS * DAY_MS,
  });

export abstract class LoggingSettings {
  /** pino's or Nest's level name, as LOG_LEVEL gives it. */
  abstract readonly level: LogLevel;
  /** LOG_FORMAT; unset: pretty when stdout is a terminal. */
  abstract readonly format: 'json' | 'pretty';
}

export const loggingSettingsOf = (config: AppConfig): LoggingSettings =>
  Object.freeze({
    level: config.LOG_LEVEL,
    format: config.LOG_FORMAT ?? (process.stdout.isTTY ? 'pretty' : 'json'),
  });

/**
 * The transcription service (SPEC §12): the deployment's, the same for every portal (TRANSCRIBE_*).
 * `url` unset: no transcripts. `authorization` is the header value, a secret: never logged.
 */
export abstract class TranscribeSettings {
  abstract readonly url?: string;
  abstract readonly authorization?: string;
  abstract readonly model: string;
  abstract readonly language?: string;
  abstract readonly firstChannel: 'caller' | 'callee';
  abstract readonly concurrency: number;
  abstract readonly waitMs: number;
}

export const transcribeSettingsOf = (config: AppConfig): TranscribeSettings =>
  Object.freeze({
    url: config.TRANSCRIBE_URL,
    authorization: authorizationOf(config.TRANSCRIBE_AUTH),
    model: config.TRANSCRIBE_MODEL,
    language: config.TRANSCRIBE_LANGUAGE,
    firstChannel: config.TRANSCRIBE_FIRST_CHANNEL,
    concurrency: config.TRANSCRIBE_CONCURRENCY,
    waitMs: config.TRANSCRIBE_WAIT_SEC * SECOND_MS,
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
  transcribe: TranscribeSettings;
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
  transcribe: { token: TranscribeSettings, of: transcribeSettingsOf },
} as const;

/** All views of one validated configuration, derived once and frozen. */
export function settingsOf(config: AppConfig): Readonly<BridgeSettings> {
  const entries = Object.entries(SETTINGS).map(([name, { of }]) => [name, of(config)]);
  return Object.freeze(Object.fromEntries(entries) as BridgeSettings);
}
