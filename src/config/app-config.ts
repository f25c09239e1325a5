import { plainToInstance, Transform } from 'class-transformer';
import {
  ArrayMaxSize,
  MaxLength,
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsPositive,
  IsString,
  Matches,
  Max,
  Min,
  validateSync,
  ValidateBy,
} from 'class-validator';
import { IANAZone } from 'luxon';
import { CredentialVariable, readCredentialUrl } from '../common/credential-url';
import { allowedNetworksOf } from '../common/egress';
import { PORTAL_ID_PATTERN } from './portal-id';

/** PBX_TRUNKS' bounds: how many patterns, and how long each (a match costs at most 2·name + pattern steps). */
export const TRUNK_PATTERNS_MAX = 50;
export const TRUNK_PATTERN_MAX_LENGTH = 100;

const toInt = ({ value }: { value: unknown }) =>
  value === undefined || value === '' ? undefined : /^-?\d+$/.test(String(value)) ? Number(value) : value;
const toNumber = ({ value }: { value: unknown }) =>
  value === undefined || value === '' ? undefined : Number.isFinite(Number(value)) ? Number(value) : value;
const toList = ({ value }: { value: unknown }) =>
  typeof value === 'string'
    ? value
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean)
    : value;
const toFlag = ({ value }: { value: unknown }) =>
  value === undefined || value === ''
    ? undefined
    : ['1', 'true', 'yes'].includes(String(value).toLowerCase());
/** An http(s) URL, possibly with `{file}`/`{path}` placeholders (PBX recording templates). */
const RECORDING_TEMPLATE = /^https?:\/\/[^/\s]+(\/\S*)?$/i;
const emptyAsUnset = ({ value }: { value: unknown }) => (value === '' ? undefined : value);

/** pino's level names and Nest's, which operators type as often. */
export const LOG_LEVELS = [
  'silent',
  'fatal',
  'error',
  'warn',
  'info',
  'log',
  'debug',
  'verbose',
  'trace',
] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Shorter PBX tokens are refused in production: they can be guessed. */
const MIN_PRODUCTION_TOKEN_LENGTH = 16;

/**
 * The whole environment of the bridge (docs/API.md), validated once at start-up and injected as a provider,
 * so tests hand in their own instance. Property names are the variable names; a bad value stops start-up
 * with a message naming the variable.
 */
export class AppConfig {
  @IsIn(['development', 'production', 'test'])
  NODE_ENV: 'development' | 'production' | 'test' = 'development';

  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT = 3000;

  /**
   * The address the HTTP server listens on; unset: every interface (0.0.0.0) in production, else only this
   * machine (127.0.0.1), so a laptop running the README's `dev-token` does not offer it to its network.
   */
  @Transform(emptyAsUnset)
  @IsOptional()
  @Matches(/^[0-9a-fA-F.:]+$|^[a-zA-Z0-9.-]+$/, {
    message: 'HOST must be an IP address or host name such as 0.0.0.0',
  })
  HOST?: string;

  /** unset: ./data/bridge.sqlite; `sqlite:PATH`; `postgres://…` */
  @Transform(emptyAsUnset)
  @IsOptional()
  @Matches(/^(sqlite:.+|postgres(ql)?:\/\/.+)$/, {
    message: 'DATABASE_URL must be sqlite:PATH or postgres://user@host/db',
  })
  DATABASE_URL?: string;

  @Transform(toList)
  @IsString({ each: true })
  PBX_TOKENS: string[] = [];

  @Transform(emptyAsUnset)
  @IsOptional()
  @Matches(/^https?:\/\/[^/]+(\/.*)?\/rest\/\d+\/[^/]+\/?$/, {
    message: 'B24_WEBHOOK_URL must look like https://portal.example.com/rest/<user_id>/<code>/',
  })
  B24_WEBHOOK_URL?: string;

  @Transform(emptyAsUnset)
  @IsOptional()
  @Matches(/^https?:\/\/[^/]+\/?$/, {
    message: 'B24_PORTAL_URL must be a base URL like https://portal.example.com',
  })
  B24_PORTAL_URL?: string;

  @Transform(emptyAsUnset)
  @IsOptional()
  @IsString()
  B24_CLIENT_ID?: string;

  /** The id the store keeps this portal's data under; default the portal's host name ("sandbox" in sandbox mode). */
  @Transform(emptyAsUnset)
  @IsOptional()
  @Matches(PORTAL_ID_PATTERN, { message: 'PORTAL_ID must be 1-100 letters, digits, dots, colons or dashes' })
  PORTAL_ID?: string;

  @Transform(emptyAsUnset)
  @IsOptional()
  @IsString()
  B24_CLIENT_SECRET?: string;

  @Transform(emptyAsUnset)
  @IsOptional()
  @Matches(/^https?:\/\/[^/]+\/?$/, {
    message: 'B24_OAUTH_URL must be a base URL like https://oauth.example.com',
  })
  B24_OAUTH_URL?: string;

  @Transform(emptyAsUnset)
  @IsOptional()
  @Matches(/^https?:\/\/.+/, { message: 'PUBLIC_URL must be an http(s) URL' })
  PUBLIC_URL?: string;

  /** OAuth mode: portal events bound as `online` handlers (posted to PUBLIC_URL) or `offline` (polled). */
  @Transform(emptyAsUnset)
  @IsOptional()
  @IsIn(['online', 'offline'])
  B24_EVENTS: 'online' | 'offline' = 'online';

  /** OAuth mode: the line the bridge registers (telephony.externalLine.add), for the default outgoing number. */
  @Transform(emptyAsUnset)
  @IsOptional()
  @Matches(/^[\w.+-]{1,50}$/, {
    message: 'B24_LINE_NUMBER must be 1-50 letters, digits, dots, pluses or dashes',
  })
  B24_LINE_NUMBER: string = 'pbx-bridge';

  /** Webhook mode: the outbound webhook's authentication code, `auth[application_token]` of its event posts. */
  @Transform(emptyAsUnset)
  @IsOptional()
  @IsString()
  B24_APPLICATION_TOKEN?: string;

  @Transform(emptyAsUnset)
  @IsOptional()
  @IsIn(['webhook', 'oauth'])
  B24_AUTH_MODE?: 'webhook' | 'oauth';

  @Transform(emptyAsUnset)
  @IsOptional()
  @IsIn(['v1'])
  B24_API_VERSION?: 'v1';

  // --- OAuth application mode (src/auth) ---

  /** How long a `state` handed out by /oauth/start is accepted by /oauth/callback. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  OAUTH_STATE_TTL_SEC = 600;

  @Transform(toNumber)
  @IsNumber()
  @IsPositive()
  B24_RATE_LIMIT_RPS = 2;

  @Transform(toInt)
  @IsInt()
  @Min(1)
  B24_RATE_BURST = 50;

  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(50)
  B24_BATCH_SIZE = 50;

  @Transform(toInt)
  @IsOptional()
  @IsInt()
  @IsPositive()
  B24_DEFAULT_USER_ID?: number;

  /** Per-request timeout towards the portal. */
  @Transform(toInt)
  @IsInt()
  @Min(100)
  B24_TIMEOUT_MS = 15000;

  /** The portal's operating-time limit: server seconds one method may use in the window (480 on real portals). */
  @Transform(toNumber)
  @IsNumber()
  @IsPositive()
  B24_OPERATING_LIMIT_SEC = 480;

  /** The sliding window of that limit, in seconds (600 on real portals). */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  B24_OPERATING_WINDOW_SEC = 600;

  /** The most batches delivery keeps in flight to one portal; within it, as many as its answer time needs. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(64)
  DELIVERY_MAX_IN_FLIGHT = 16;

  @Transform(emptyAsUnset)
  @IsOptional()
  @Matches(/^[A-Z]{2}$/, { message: 'DEFAULT_COUNTRY must be an ISO 3166 alpha-2 code such as DE' })
  DEFAULT_COUNTRY?: string;

  /** IANA zone of PBXs that post local times (Asterisk `start`, Yeastar `time_start`); `?tz=` overrides it. */
  @Transform(({ value }) => (value === '' ? 'UTC' : value))
  @ValidateBy({
    name: 'isIanaZone',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && IANAZone.isValidZone(value),
      defaultMessage: () => 'PBX_TIME_ZONE must be an IANA time zone such as Europe/Berlin or UTC',
    },
  })
  PBX_TIME_ZONE = 'UTC';

  @Transform(emptyAsUnset)
  @IsOptional()
  @IsString()
  ADMIN_TOKEN?: string;

  @Transform(toFlag)
  @IsBoolean()
  SANDBOX = false;

  /** Port of the in-process sandbox portal in sandbox mode (0: any free port). */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(65535)
  SANDBOX_PORT = 8099;

  /** Largest accepted PBX request body, in bytes. */
  @Transform(toInt)
  @IsInt()
  @Min(1024)
  PBX_BODY_LIMIT = 1024 * 1024;

  /** Writes (posts, recordings) per second one PBX token may make before it gets 429. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  PBX_RATE_LIMIT_RPS = 200;

  /** Reads (call status, lookups) per second one PBX token may make before it gets 429; apart from writes. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  PBX_READ_RATE_LIMIT_RPS = 1000;

  /** How long a call.ended without direction/phoneNumber waits for its call.started. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  HOLD_ENDED_WITHOUT_START_SEC = 3600;

  /** Largest retry delay after repeated portal failures. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  DELIVERY_MAX_BACKOFF_SEC = 300;

  /**
   * How long a replica's right to deliver a portal's calls lasts without renewal (renewed every third of
   * it): after a replica dies, another takes its portals over within this time.
   */
  @Transform(toInt)
  @IsInt()
  @Min(2)
  @Max(300)
  DELIVERY_LEASE_SEC = 10;

  /** PostgreSQL connections per replica. */
  @Transform(toInt)
  @IsInt()
  @Min(2)
  @Max(100)
  DATABASE_POOL_SIZE = 10;

  /** On SIGTERM: how long readiness reports false before the HTTP server stops taking connections. */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  SHUTDOWN_DELAY_MS = 0;

  // --- CRM lookups and the employee directory (src/crm) ---

  /** How long GET /v1/lookup waits for the portal on a cache miss, the wait for the budget included. */
  @Transform(toInt)
  @IsInt()
  @Min(50)
  LOOKUP_DEADLINE_MS = 1500;

  /** How long a lookup answer is served from the cache before the portal is asked again. */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  LOOKUP_CACHE_TTL_SEC = 300;

  /** How many phone numbers the lookup cache holds; the least recently used go first. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  LOOKUP_CACHE_SIZE = 10000;

  /** How often the employee directory (internal number ↔ portal user) is read again from the portal. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  EMPLOYEE_REFRESH_SEC = 300;

  /** `1`: a registered call is bound to the CRM client the lookup finds, instead of the portal's choice. */
  @Transform(toFlag)
  @IsBoolean()
  B24_BIND_CRM_ENTITY = false;

  /** `1`: an inbound call that ends missed, busy or cancelled gives its client's responsible employee a task. */
  @Transform(toFlag)
  @IsBoolean()
  MISSED_CALL_TASK = false;

  /** Minutes from the end of a missed call to its task's deadline. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  MISSED_CALL_TASK_DEADLINE_MIN = 60;

  /**
   * Click-to-call: a PBX outbound call that carries no CRM_CALL_ID is the click's call when it goes from the
   * clicking employee's extension to the clicked number and starts within this many seconds of the click.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  DIAL_MATCH_SEC = 60;

  // --- Hardening (issue 13) ---

  /**
   * Domains the portal may move to (a 3xx) besides its own registrable domain: patterns such as
   * `*.example.com` or `portal.example.org`. Redirects are followed only over https and only to these.
   */
  @Transform(toList)
  @IsString({ each: true })
  B24_ALLOWED_DOMAINS: string[] = [];

  /**
   * B24_APP_MODE=multi: networks (CIDRs) a portal's own settings may reach although they are loopback,
   * link-local, private or shared (SPEC §8): e.g. the VPN the hosted bridge reaches customers' PBXs over.
   * Plaintext credentials are taken only to these; everything else a tenant names needs TLS.
   */
  @Transform(toList)
  @IsString({ each: true })
  @ValidateBy({
    name: 'isCidrList',
    validator: {
      validate: (value: unknown) =>
        !Array.isArray(value) || !('problem' in allowedNetworksOf(value as string[])),
      defaultMessage: (args) => {
        const checked = allowedNetworksOf((args?.value as string[]) ?? []);
        return 'problem' in checked ? checked.problem : 'TENANT_ALLOWED_NETWORKS is not usable';
      },
    },
  })
  TENANT_ALLOWED_NETWORKS: string[] = [];

  // --- Many portals (docs/API.md) ---

  /**
   * `single` (default): the one portal of B24_WEBHOOK_URL or B24_PORTAL_URL. `multi`: a published OAuth
   * application any portal may install (B24_ALLOWED_DOMAINS narrows which), each install a portal record
   * with its own tokens, budget, settings, queue and PBX tokens (/v1/admin/portals).
   */
  @Transform(emptyAsUnset)
  @IsOptional()
  @IsIn(['single', 'multi'])
  B24_APP_MODE: 'single' | 'multi' = 'single';

  /** `1`: metrics carry a `portal` label per portal; else they aggregate (`portal="all"` in multi mode). */
  @Transform(toFlag)
  @IsBoolean()
  METRICS_PORTAL_LABEL = false;

  /** Without `direction` from the PBX: a number of at most this many digits is an internal extension. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(15)
  PBX_INTERNAL_MAX_DIGITS = 6;

  /**
   * Where each PBX serves the recordings it names only by file (docs/PBX.md): a base URL the file name is
   * appended to, or a template with `{file}`/`{path}`. Unset: such recordings are not attached.
   */
  @Transform(emptyAsUnset)
  @IsOptional()
  @Matches(RECORDING_TEMPLATE, { message: 'YEASTAR_RECORDING_URL must be an http(s) URL' })
  YEASTAR_RECORDING_URL?: string;

  @Transform(emptyAsUnset)
  @IsOptional()
  @Matches(RECORDING_TEMPLATE, { message: 'ASTERISK_RECORDING_URL must be an http(s) URL' })
  ASTERISK_RECORDING_URL?: string;

  @Transform(emptyAsUnset)
  @IsOptional()
  @Matches(RECORDING_TEMPLATE, { message: 'FREESWITCH_RECORDING_URL must be an http(s) URL' })
  FREESWITCH_RECORDING_URL?: string;

  /** Finished and failed calls (and their events) older than this many days are deleted in the background. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  RETENTION_DAYS = 30;

  /** B24_APP_MODE=multi: a portal that uninstalled the application is deleted, with all its data, after this many days. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  PORTAL_RETENTION_DAYS = 30;

  /**
   * B24_APP_MODE=multi: a portal's services (credentials, client, directory, lookups, delivery loop) are
   * dropped after this many seconds without work, and built again on its next call, lookup or event.
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  PORTAL_IDLE_SEC = 600;

  /**
   * The application's page asks the portal again whether its user is still an administrator (`user.admin`)
   * when the last answer is older than this many seconds; 0: on every page.
   */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  APP_PAGE_RECHECK_SEC = 300;

  /** Attempts per step (register, finish, attachRecord) before a call the portal keeps refusing is parked as failed. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  DELIVERY_MAX_ATTEMPTS = 20;

  /** Optional Bearer token `GET /metrics` requires; unset: /metrics is open (scraped inside the cluster). */
  @Transform(emptyAsUnset)
  @IsOptional()
  @IsString()
  METRICS_TOKEN?: string;

  /**
   * Hosts the bridge may download recordings from (`pbx.local`, `10.0.0.5:8080`, `*.pbx.example.com`); a
   * `recordingUrl` elsewhere goes to the portal as RECORD_URL. Empty: the bridge downloads nothing.
   */
  @Transform(toList)
  @ValidateBy({
    name: 'isHostPatternList',
    validator: {
      validate: (value: unknown) =>
        Array.isArray(value) &&
        value.every((item) => typeof item === 'string' && /^(\*\.)?[a-z0-9.-]+(:\d{1,5})?$/i.test(item)),
      defaultMessage: () =>
        'RECORDING_FETCH_HOSTS must be comma-separated hosts: pbx.local, 10.0.0.5:8080, *.pbx.example.com',
    },
  })
  RECORDING_FETCH_HOSTS: string[] = [];

  /** Secret: credentials for recording downloads, `basic:user:password` or `bearer:token`. */
  @Transform(emptyAsUnset)
  @IsOptional()
  @Matches(/^(basic:[^:]+:.+|bearer:.+)$/, {
    message: 'RECORDING_FETCH_AUTH must be basic:user:password or bearer:token',
  })
  RECORDING_FETCH_AUTH?: string;

  /**
   * Largest recording downloaded or pushed, in MB (10^6 bytes). At most 32: the portal takes a POST of up
   * to 32 MiB, so a bigger file could never be attached (docs/decisions/recordings.md).
   */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(32, {
    message:
      'RECORDING_MAX_MB must be at most 32: the portal takes files of up to 32 MB, a bigger one could never be attached',
  })
  RECORDING_MAX_MB = 32;

  /** Recording bytes one portal may have waiting for upload, in MB; 0: no limit. */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  RECORDING_QUOTA_MB = 1000;

  /** A recording still held this long after it was stored (its call never settled) is deleted, in hours. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  RECORDING_KEEP_HOURS = 72;

  /** How long after the call ended a recording that is not there yet is retried, in seconds. */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  RECORDING_WAIT_SEC = 900;

  /** File bytes (after base64) one portal request may carry, in MB; larger files go through `uploadUrl`. */
  @Transform(toNumber)
  @IsNumber()
  @IsPositive()
  @Max(31)
  RECORDING_REQUEST_MAX_MB = 8;

  /** Click-to-call (docs/API.md): how the PBX is asked to dial; unset: click-to-call is off. */
  @Transform(emptyAsUnset)
  @IsOptional()
  @IsIn(['ami', 'esl', 'http'], { message: 'DIAL_MODE must be ami, esl or http' })
  DIAL_MODE?: 'ami' | 'esl' | 'http';

  /** Secret: the Asterisk Manager Interface, `tcp://user:secret@host:5038` or `tls://user:secret@host:5039`. */
  @Transform(emptyAsUnset)
  @IsOptional()
  @ValidateBy(credentialUrlRule('AMI_URL'))
  AMI_URL?: string;

  /** Follow the PBX itself (docs/API.md): `ami` logs in to AMI_URL, `esl` to ESL_URL, and turns its events into call events. */
  @Transform(emptyAsUnset)
  @IsOptional()
  @IsIn(['ami', 'esl'], { message: 'PBX_EVENTS must be ami or esl (or unset: posted events only)' })
  PBX_EVENTS?: 'ami' | 'esl';

  /**
   * Secret: the PBX's CDR database as the ledger of record (docs/API.md), FreePBX's `asteriskcdrdb` with table
   * `cdr`: `mysql://user:password@host:3306/asteriskcdrdb`, `?ssl=true` for TLS. Alone or beside PBX_EVENTS=ami.
   */
  @Transform(emptyAsUnset)
  @IsOptional()
  @ValidateBy(credentialUrlRule('ASTERISK_CDR_URL'))
  ASTERISK_CDR_URL?: string;

  /** Channel-name patterns of trunks (`PJSIP/trunk*`); unset: an endpoint named by an internal number is a phone. */
  @Transform(toList)
  @IsString({ each: true })
  @Matches(/^[^\s,]+$/, {
    each: true,
    message: 'PBX_TRUNKS must be comma-separated channel patterns like PJSIP/trunk*',
  })
  // A tenant's text (a portal's follow settings): bounded, so matching every channel name stays cheap.
  @ArrayMaxSize(TRUNK_PATTERNS_MAX, { message: `PBX_TRUNKS takes at most ${TRUNK_PATTERNS_MAX} patterns` })
  @MaxLength(TRUNK_PATTERN_MAX_LENGTH, {
    each: true,
    message: `PBX_TRUNKS patterns are at most ${TRUNK_PATTERN_MAX_LENGTH} characters each`,
  })
  PBX_TRUNKS: string[] = [];

  /** The Originate's Channel; `{extension}` is the clicking employee's internal number. */
  @IsString()
  @Matches(/\{extension\}/, { message: 'AMI_CHANNEL must contain {extension}' })
  AMI_CHANNEL = 'PJSIP/{extension}';

  /** The dialplan context the Originate dials the number in. */
  @IsString()
  @Matches(/^[\w-]+$/, { message: 'AMI_CONTEXT must be a dialplan context name' })
  AMI_CONTEXT = 'from-internal';

  /** Secret: the FreeSWITCH event socket, `tcp://:password@host:8021`. */
  @Transform(emptyAsUnset)
  @IsOptional()
  @ValidateBy(credentialUrlRule('ESL_URL'))
  ESL_URL?: string;

  /** The arguments of `bgapi originate`: `{crmCallId}`, `{extension}`, `{number}`, `{userId}` are filled in. */
  @IsString()
  @Matches(/^[^\r\n]+$/, { message: 'ESL_ORIGINATE must be one line' })
  ESL_ORIGINATE = '{crm_call_id={crmCallId}}user/{extension} {number} XML default';

  /** DIAL_MODE=http: the URL template (`{extension}`, `{number}`, `{crmCallId}`, `{userId}`, URL-encoded). */
  @Transform(emptyAsUnset)
  @IsOptional()
  @Matches(/^https?:\/\/\S+$/i, { message: 'DIAL_URL must be an http(s) URL template' })
  @ValidateBy({
    name: 'isUsableDialUrl',
    validator: {
      validate: (value: unknown) => typeof value !== 'string' || dialUrlProblem(value) === undefined,
      // Never the value: it may carry a password.
      defaultMessage: (args) => dialUrlProblem(String(args?.value)) ?? 'DIAL_URL is not usable',
    },
  })
  DIAL_URL?: string;

  @IsIn(['POST', 'GET'], { message: 'DIAL_METHOD must be POST or GET' })
  DIAL_METHOD: 'POST' | 'GET' = 'POST';

  /** Secret: credentials of DIAL_URL, `basic:user:password` or `bearer:token`. */
  @Transform(emptyAsUnset)
  @IsOptional()
  @Matches(/^(basic:[^:]+:.+|bearer:.+)$/, {
    message: 'DIAL_AUTH must be basic:user:password or bearer:token',
  })
  DIAL_AUTH?: string;

  /** How long a click is retried while the PBX cannot be reached before the portal's call is finished as failed. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(600)
  DIAL_TIMEOUT_SEC = 30;

  /** pino's level names, or Nest's (`log` is pino's `info`, `verbose` its `trace`). */
  @IsIn(LOG_LEVELS, { message: `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}` })
  LOG_LEVEL: LogLevel = 'log';

  /** `json` (one object a line) or `pretty` (readable lines); unset: pretty on a terminal, JSON otherwise. */
  @Transform(emptyAsUnset)
  @IsOptional()
  @IsIn(['json', 'pretty'], { message: 'LOG_FORMAT must be json or pretty' })
  LOG_FORMAT?: 'json' | 'pretty';

  /** The address to listen on: HOST, else every interface in production and this machine only elsewhere. */
  get listenHost(): string {
    return this.HOST ?? (this.NODE_ENV === 'production' ? '0.0.0.0' : '127.0.0.1');
  }

  get sandboxMode(): boolean {
    return sandboxModeOf(this);
  }

  get authMode(): 'webhook' | 'oauth' {
    if (this.B24_APP_MODE === 'multi') return 'oauth';
    if (this.B24_AUTH_MODE) return this.B24_AUTH_MODE;
    return this.B24_PORTAL_URL && !this.B24_WEBHOOK_URL ? 'oauth' : 'webhook';
  }
}

export class ConfigError extends Error {}

/** Read by readCredentialUrl (any character in the password); the message names the variable, never the value. */
function credentialUrlRule(variable: CredentialVariable) {
  const problem = (value: unknown): string | undefined => {
    if (typeof value !== 'string') return undefined;
    const parsed = readCredentialUrl(value, variable);
    // The configuration's error puts `AMI_URL: ` in front already: the rule's words without the name.
    return 'problem' in parsed ? parsed.problem.slice(variable.length + 1) : undefined;
  };
  return {
    name: `is${variable}`,
    validator: {
      validate: (value: unknown) => problem(value) === undefined,
      defaultMessage: (args?: { value?: unknown }) => problem(args?.value) ?? `${variable} is not usable`,
    },
  };
}

/**
 * What the HTTP dialer needs of DIAL_URL beyond its shape: with each `{placeholder}` filled in it is a URL
 * (so `http://pbx.local:{port}/x`, whose port no click fills, is refused here rather than when the dialer is
 * built), and it carries no `user:password@` (fetch refuses such a URL with an error quoting it whole, so
 * the password would reach logs, health and the portal's FAILED_REASON; DIAL_AUTH holds credentials).
 */
export function dialUrlProblem(template: string): string | undefined {
  if (!/^https?:\/\//i.test(template)) return undefined;
  let url: URL;
  try {
    url = new URL(template.replace(/\{\w+\}/g, 'x'));
  } catch {
    return 'DIAL_URL must be a URL once its {extension}, {number}, {crmCallId}, {userId} are filled in';
  }
  if (url.username || url.password) {
    return 'DIAL_URL must not carry user:password: put the credentials in DIAL_AUTH (basic:user:password)';
  }
  return undefined;
}

/** Environment variables as the process (or a test) has them: names to strings. */
export type Environment = Record<string, string | undefined>;

/**
 * Sandbox mode: asked for (SANDBOX), or outside production with no portal configured. `main.ts` decides
 * with it whether to start the sandbox portal before the bridge.
 */
export function sandboxModeOf(
  config: Pick<AppConfig, 'SANDBOX' | 'NODE_ENV' | 'B24_WEBHOOK_URL' | 'B24_PORTAL_URL'> &
    Partial<Pick<AppConfig, 'B24_APP_MODE'>>,
): boolean {
  // Multi mode names no portal by design: the portals come by installing the application.
  if (config.B24_APP_MODE === 'multi') return false;
  return (
    config.SANDBOX || (config.NODE_ENV !== 'production' && !config.B24_WEBHOOK_URL && !config.B24_PORTAL_URL)
  );
}

/**
 * Builds the validated configuration from an environment; throws one ConfigError naming every bad variable.
 * The result is frozen (its lists too): nothing changes it after validation.
 */
export function loadConfig(env: Environment): AppConfig {
  const known = Object.keys(new AppConfig());
  const given = Object.fromEntries(Object.entries(env).filter(([key]) => known.includes(key)));
  return settled(plainToInstance(AppConfig, given, { exposeDefaultValues: true }), crossFieldProblems);
}

/**
 * Sandbox mode's effective configuration: the operator's (already validated by `loadConfig`), delivering by
 * webhook to the sandbox portal started for it, under PORTAL_ID "sandbox" unless one was set. The
 * cross-checks concern what the operator set and ran there (SANDBOX beside a portal is refused there, not
 * here, where the sandbox is the portal); the values added are checked field by field again.
 */
export function withSandboxPortal(operator: AppConfig, webhookUrl: string): AppConfig {
  if (!operator.sandboxMode) {
    throw new ConfigError('SANDBOX: a portal is configured, the sandbox cannot take its place');
  }
  const config = Object.assign(new AppConfig(), operator, {
    SANDBOX: true,
    B24_WEBHOOK_URL: webhookUrl,
    B24_AUTH_MODE: 'webhook',
    PORTAL_ID: operator.PORTAL_ID ?? 'sandbox',
  } satisfies Partial<AppConfig>);
  return settled(config, () => []);
}

/** Field checks, then `crossChecks`; one ConfigError naming every problem, else the configuration frozen. */
function settled(config: AppConfig, crossChecks: (config: AppConfig) => string[]): AppConfig {
  const problems = validateSync(config, { forbidUnknownValues: false }).map(
    (error) => `${error.property}: ${Object.values(error.constraints ?? {}).join('; ')}`,
  );
  problems.push(...crossChecks(config));
  if (problems.length) throw new ConfigError(`Invalid configuration: ${problems.join(' | ')}`);
  for (const value of Object.values(config)) if (Array.isArray(value)) Object.freeze(value);
  return Object.freeze(config);
}

function crossFieldProblems(config: AppConfig): string[] {
  if (config.B24_APP_MODE === 'multi') return multiPortalProblems(config);
  const problems: string[] = [];
  const production = config.NODE_ENV === 'production';
  const hasPortal = Boolean(config.B24_WEBHOOK_URL || config.B24_PORTAL_URL);
  // The sandbox is a fake portal: calls delivered to it never reach the CRM, so it must never run by mistake.
  if (config.SANDBOX && production) {
    problems.push('SANDBOX: the sandbox portal is a fake and cannot run with NODE_ENV=production');
  }
  if (config.SANDBOX && hasPortal) {
    problems.push(
      'SANDBOX: set either SANDBOX or a portal (B24_WEBHOOK_URL, B24_PORTAL_URL), not both: the sandbox would take the calls',
    );
  }
  if (production && !hasPortal && !config.SANDBOX) {
    problems.push(
      'B24_WEBHOOK_URL: no portal configured (set B24_WEBHOOK_URL or B24_PORTAL_URL) in production',
    );
  }
  if (config.DIAL_MODE === 'ami' && !config.AMI_URL) problems.push('AMI_URL: required when DIAL_MODE=ami');
  if (config.PBX_EVENTS === 'ami' && !config.AMI_URL) problems.push('AMI_URL: required when PBX_EVENTS=ami');
  if (config.DIAL_MODE === 'esl' && !config.ESL_URL) problems.push('ESL_URL: required when DIAL_MODE=esl');
  if (config.PBX_EVENTS === 'esl' && !config.ESL_URL) problems.push('ESL_URL: required when PBX_EVENTS=esl');
  if (config.DIAL_MODE === 'http' && !config.DIAL_URL) {
    problems.push('DIAL_URL: required when DIAL_MODE=http');
  }
  if (production) problems.push(...productionProblems(config));
  if (config.B24_AUTH_MODE === 'webhook' && !config.B24_WEBHOOK_URL && !config.SANDBOX) {
    problems.push('B24_WEBHOOK_URL: required when B24_AUTH_MODE=webhook');
  }
  if (config.authMode === 'oauth' && !config.SANDBOX && hasPortal) {
    for (const name of ['B24_PORTAL_URL', 'B24_CLIENT_ID', 'B24_CLIENT_SECRET'] as const) {
      if (!config[name]) problems.push(`${name}: required when B24_AUTH_MODE=oauth`);
    }
  }
  return problems;
}

/**
 * Multi mode: a published application. Its tokens come from the vendor's OAuth server (B24_OAUTH_URL), its
 * portals from their installs, its PBX credentials from /v1/admin/portals/:portalId/pbx-tokens.
 */
function multiPortalProblems(config: AppConfig): string[] {
  const problems: string[] = [];
  for (const name of ['B24_CLIENT_ID', 'B24_CLIENT_SECRET', 'B24_OAUTH_URL'] as const) {
    if (!config[name]) problems.push(`${name}: required when B24_APP_MODE=multi`);
  }
  const single = {
    B24_PORTAL_URL: 'each portal comes from its install',
    B24_WEBHOOK_URL: 'each portal comes from its install',
    PORTAL_ID: "each portal's id is its member_id",
    PBX_TOKENS: 'PBX tokens belong to one portal: POST /v1/admin/portals/:portalId/pbx-tokens',
    SANDBOX: 'the sandbox is one portal',
    DIAL_MODE: "the dial settings name one portal's PBX",
    PBX_EVENTS: 'a PBX is followed for one portal: PATCH /v1/admin/portals/:portalId {"follow": …}',
    // One host list and one credential for every tenant would let one portal's PBX have another's files
    // fetched with the shared credential: each portal sets its own (PATCH /v1/admin/portals/:portalId).
    RECORDING_FETCH_HOSTS:
      'recording hosts belong to one portal: PATCH /v1/admin/portals/:portalId {"recordingFetch": …}',
    RECORDING_FETCH_AUTH:
      'recording credentials belong to one portal: PATCH /v1/admin/portals/:portalId {"recordingFetch": …}',
    ASTERISK_CDR_URL:
      'the CDR ledger is one portal\'s setting: PATCH /v1/admin/portals/:portalId {"follow": …}',
  } as const;
  for (const [name, why] of Object.entries(single) as [keyof typeof single, string][]) {
    const value = config[name];
    if (value && (!Array.isArray(value) || value.length > 0)) {
      problems.push(`${name}: not used with B24_APP_MODE=multi (${why})`);
    }
  }
  if (config.B24_AUTH_MODE === 'webhook') {
    problems.push('B24_AUTH_MODE: B24_APP_MODE=multi is an OAuth application');
  }
  if (config.NODE_ENV === 'production') {
    for (const name of ['B24_OAUTH_URL', 'PUBLIC_URL'] as const) {
      const url = config[name];
      if (url && !/^https:\/\//i.test(url)) problems.push(`${name}: must be an https:// URL in production`);
    }
    if (!config.ADMIN_TOKEN) problems.push('ADMIN_TOKEN: required with B24_APP_MODE=multi in production');
    problems.push(...placeholderProblems(config));
  }
  return problems;
}

/** Secrets cross the network in production: portal URLs only over TLS, PBX tokens too long to guess. */
function productionProblems(config: AppConfig): string[] {
  const problems: string[] = [];
  for (const name of ['B24_WEBHOOK_URL', 'B24_PORTAL_URL', 'B24_OAUTH_URL'] as const) {
    const url = config[name];
    if (url && !/^https:\/\//i.test(url)) problems.push(`${name}: must be an https:// URL in production`);
  }
  if (config.PBX_TOKENS.length === 0) {
    problems.push('PBX_TOKENS: at least one PBX token is required in production');
  }
  // Positions only: the message never shows a token.
  const short = config.PBX_TOKENS.flatMap((token, index) =>
    token.length < MIN_PRODUCTION_TOKEN_LENGTH ? [index + 1] : [],
  );
  if (short.length) {
    problems.push(
      `PBX_TOKENS: every token must be at least ${MIN_PRODUCTION_TOKEN_LENGTH} characters in production ` +
        `(too short: token ${short.join(', ')} of ${config.PBX_TOKENS.length})`,
    );
  }
  return [...problems, ...placeholderProblems(config)];
}

/**
 * The repository's example secrets (k8s/base/secrets.env.example, k8s/overlays/ha/database.env.example) are
 * long enough to pass every other check, and public: an overlay applied unchanged would accept them.
 */
const PLACEHOLDER = /replace-with/i;

/** In production, the secrets still holding a published placeholder, by variable (never the value). */
function placeholderProblems(config: AppConfig): string[] {
  const secrets: Record<string, string | string[] | undefined> = {
    PBX_TOKENS: config.PBX_TOKENS,
    ADMIN_TOKEN: config.ADMIN_TOKEN,
    METRICS_TOKEN: config.METRICS_TOKEN,
    B24_WEBHOOK_URL: config.B24_WEBHOOK_URL,
    B24_CLIENT_SECRET: config.B24_CLIENT_SECRET,
    DATABASE_URL: config.DATABASE_URL,
  };
  return Object.entries(secrets)
    .filter(([, value]) => [value ?? []].flat().some((one) => PLACEHOLDER.test(one)))
    .map(
      ([name]) =>
        `${name}: still the repository's placeholder ("replace-with-…"); set your own secret (docs/OPERATIONS.md, "Secrets")`,
    );
}
