import { IsString, Matches } from 'class-validator';
import { flag, int, list, oneOf, optional, scoped, secret, section, singleOnly } from './setting';
import { baseUrl, cidrList } from './value-rules';

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

/**
 * The deployment's settings: where it listens, the database, its own keys, the mode, logging, and the
 * limits that protect the deployment from any one portal: no portal's own settings change these.
 */
export const DEPLOYMENT_SETTINGS = scoped('deployment', {
  ...section('Process and HTTP', {
    NODE_ENV: oneOf(
      ['development', 'production', 'test'],
      'development',
      'development, production or test; production refuses risky settings and a missing portal',
    ),
    PORT: int(3000, { min: 0, max: 65535 }, 'HTTP port'),
    // Not every interface outside production: a laptop running the README's `dev-token` keeps it to itself.
    HOST: optional(
      'the address to listen on; unset: 0.0.0.0 (every interface) with NODE_ENV=production, else 127.0.0.1 (this machine only)',
      Matches(/^[0-9a-fA-F.:]+$|^[a-zA-Z0-9.-]+$/, {
        message: 'HOST must be an IP address or host name such as 0.0.0.0',
      }),
    ),
    SHUTDOWN_DELAY_MS: int(
      0,
      { min: 0 },
      'on SIGTERM: how long readiness reports false before the server stops taking connections',
    ),
    LOG_LEVEL: oneOf(
      LOG_LEVELS,
      'log',
      "pino's trace, debug, info, warn, error, fatal, silent, or Nest's log (= info) and verbose (= trace)",
      { message: `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}` },
    ),
    LOG_FORMAT: oneOf(
      ['json', 'pretty'],
      undefined,
      'json (a JSON object per line, for containers) or pretty (readable lines); unset: pretty on a terminal, else json',
      { message: 'LOG_FORMAT must be json or pretty' },
    ),
  }),
  ...section('Store', {
    DATABASE_URL: secret(
      optional(
        'secret (a PostgreSQL URL holds a password): sqlite:PATH (relative to the working directory) or postgres://user:password@host:5432/db; unset: sqlite:./data/bridge.sqlite',
        Matches(/^(sqlite:.+|postgres(ql)?:\/\/.+)$/, {
          message: 'DATABASE_URL must be sqlite:PATH or postgres://user@host/db',
        }),
      ),
    ),
    DATABASE_POOL_SIZE: int(10, { min: 2, max: 100 }, 'PostgreSQL connections per replica'),
    RETENTION_DAYS: int(
      30,
      { min: 1 },
      'settled calls and their events are deleted once unchanged for this many days',
    ),
    DELIVERY_LEASE_SEC: int(
      10,
      { min: 2, max: 300 },
      'several replicas: how long a replica keeps the right to deliver a portal without renewing it, in seconds\n(renewed every third of it: after a replica dies, another takes its portals over within this time)',
    ),
  }),
  ...section('Sandbox (outside production, no portal configured means sandbox mode)', {
    SANDBOX: singleOnly(
      'the sandbox is one portal',
      flag(
        '1: run the built-in fake portal in this process and deliver to it (never with a portal or in production)',
      ),
    ),
    SANDBOX_PORT: int(
      8099,
      { min: 0, max: 65535 },
      "the sandbox portal's port on 127.0.0.1 (0: any free port)",
    ),
  }),
  ...section('The application and its portals', {
    B24_APP_MODE: oneOf(
      ['single', 'multi'],
      'single',
      'single: the one portal of B24_WEBHOOK_URL or B24_PORTAL_URL; multi: a published application any portal installs',
      { emptyIsDefault: true },
    ),
    B24_CLIENT_ID: optional("the application's client id"),
    B24_CLIENT_SECRET: secret(optional("secret: the application's client secret")),
    B24_OAUTH_URL: optional(
      'where /oauth/token/ lives; unset: B24_PORTAL_URL',
      baseUrl('B24_OAUTH_URL', 'https://oauth.example.com'),
    ),
    PUBLIC_URL: optional(
      "the bridge's public base URL, for the OAuth redirect_uri and the portal's event posts ({PUBLIC_URL}/v1/portal/events)",
      Matches(/^https?:\/\/.+/, { message: 'PUBLIC_URL must be an http(s) URL' }),
    ),
    OAUTH_STATE_TTL_SEC: int(
      600,
      { min: 1 },
      'how long a state from /oauth/start is accepted by /oauth/callback, in seconds',
    ),
    B24_ALLOWED_DOMAINS: list(
      'comma-separated hosts the portal may redirect to besides its own registrable domain (*.example.com or a host)\n(redirects are followed only over https); with B24_APP_MODE=multi also the portals that may install',
      IsString({ each: true }),
    ),
    // SPEC §8: everything else a tenant names needs TLS and a public address.
    TENANT_ALLOWED_NETWORKS: list(
      "with many portals (multi mode): comma-separated CIDRs a portal's own settings (AMI_URL, ESL_URL, ASTERISK_CDR_URL, dial URL, recording hosts) may reach although they are loopback, link-local, private or shared (e.g. the VPN to customers' PBXs, 10.20.0.0/16); plaintext credentials only to these; unset: none",
      IsString({ each: true }),
      cidrList('TENANT_ALLOWED_NETWORKS'),
    ),
    PORTAL_RETENTION_DAYS: int(
      30,
      { min: 1 },
      "with many portals (multi mode): days an uninstalled portal's data is kept before it is deleted",
    ),
    PORTAL_IDLE_SEC: int(
      600,
      { min: 1 },
      "with many portals (multi mode): seconds without work after which a portal's services are dropped (built again by its next work)",
    ),
  }),
  ...section('Limits', {
    PBX_BODY_LIMIT: int(1024 * 1024, { min: 1024 }, 'largest PBX request body in bytes'),
    PBX_RATE_LIMIT_RPS: int(
      200,
      { min: 1 },
      'writes (posts, recordings) per second one PBX token may make before it gets 429',
    ),
    PBX_READ_RATE_LIMIT_RPS: int(
      1000,
      { min: 1 },
      'reads (call status, lookups) per second one PBX token may make before it gets 429, apart from writes',
    ),
    // The portal takes a POST of up to 32 MiB (docs/decisions/recordings.md).
    RECORDING_MAX_MB: int(
      32,
      {
        min: 1,
        max: 32,
        maxMessage:
          'RECORDING_MAX_MB must be at most 32: the portal takes files of up to 32 MB, a bigger one could never be attached',
      },
      'largest recording downloaded or pushed, in MB; at most 32 (the portal takes no bigger file)',
    ),
    RECORDING_QUOTA_MB: int(
      1000,
      { min: 0 },
      'recording bytes one portal may have waiting for upload, in MB (a push past it gets 507); 0: no limit',
    ),
  }),
  ...section('Operators', {
    ADMIN_TOKEN: secret(
      optional('secret: enables /v1/admin and /oauth/start (and the API documentation in production)'),
    ),
    METRICS_TOKEN: secret(
      optional('secret: when set, GET /metrics needs it as Bearer token; unset: /metrics is open'),
    ),
    METRICS_PORTAL_LABEL: flag(
      '1: metrics carry a portal label per portal; else they aggregate (portal="all" with B24_APP_MODE=multi)',
    ),
  }),
});
