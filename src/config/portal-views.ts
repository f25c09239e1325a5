import { AppConfig } from './app-config';
import { LineBook, lineBook } from '../common/lines';

/*
 * The views a portal's runtime is built from (src/tenancy resolves each per portal), in the code's units;
 * settings.ts has the process's own views and provides all of them.
 */

const SECOND_MS = 1000;

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
  /** LINES and B24_LINE_NUMBER (docs/API.md "Lines"): each call's line and its rule. */
  abstract readonly lines: LineBook;
}

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
    lines: lineBook(config.LINES, config.B24_LINE_NUMBER, config.DEFAULT_COUNTRY),
  });

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

export const lookupSettingsOf = (config: AppConfig): LookupSettings =>
  Object.freeze({
    deadlineMs: config.LOOKUP_DEADLINE_MS,
    cacheTtlMs: config.LOOKUP_CACHE_TTL_SEC * SECOND_MS,
    cacheSize: config.LOOKUP_CACHE_SIZE,
    employeeRefreshMs: config.EMPLOYEE_REFRESH_SEC * SECOND_MS,
    bindCrmEntity: config.B24_BIND_CRM_ENTITY,
    defaultCountry: config.DEFAULT_COUNTRY,
  });

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

export const followSettingsOf = (config: AppConfig): FollowSettings =>
  Object.freeze({
    mode: config.PBX_EVENTS,
    amiUrl: config.AMI_URL,
    cdrUrl: config.ASTERISK_CDR_URL,
    eslUrl: config.ESL_URL,
    trunks: Object.freeze([...config.PBX_TRUNKS]),
  });

/** OAuth mode's portal events (B24_EVENTS, B24_LINE_NUMBER, PUBLIC_URL): what the event binder needs. */
export abstract class EventSettings {
  /** B24_EVENTS=offline: events are polled (`event.offline.get`), not posted to PUBLIC_URL. */
  abstract readonly offline: boolean;
  /** The line the bridge registers (`telephony.externalLine.add`). */
  abstract readonly lineNumber: string;
  /** Where the portal posts events (`PUBLIC_URL/v1/portal/events`); unset: nothing is bound online. */
  abstract readonly publicUrl?: string;
}

export const eventSettingsOf = (config: AppConfig): EventSettings =>
  Object.freeze({
    offline: config.B24_EVENTS === 'offline',
    lineNumber: config.B24_LINE_NUMBER,
    publicUrl: config.PUBLIC_URL,
  });
