import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsPositive, IsString, Matches, MaxLength } from 'class-validator';
import { PORTAL_ID_PATTERN } from './portal-id';
import { LineRule } from '../common/lines';
import {
  EMPTY_IS_DEFAULT,
  flag,
  int,
  json,
  list,
  oneOf,
  optional,
  optionalInt,
  positive,
  scoped,
  secret,
  section,
  singleOnly,
  text,
} from './setting';
import {
  baseUrl,
  credentials,
  credentialUrl,
  hostPatterns,
  ianaZone,
  lineRules,
  recordingTemplate,
  usableDialUrl,
} from './value-rules';

/** PBX_TRUNKS' bounds: how many patterns, and how long each (a match costs at most 2·name + pattern steps). */
export const TRUNK_PATTERNS_MAX = 50;
export const TRUNK_PATTERN_MAX_LENGTH = 100;

const recordingUrl = (name: string, about: string) => optional(about, recordingTemplate(name));
const perPortal = (what: string, setting: 'follow' | 'recordingFetch') =>
  `${what}: PATCH /v1/admin/portals/:portalId {"${setting}": …}`;

/**
 * One portal's settings: what its runtime reads (its portal, delivery, lookups, recordings, following the
 * PBX, click-to-call, tasks, the operating-time budget). In single mode the environment sets them; the
 * ones marked `singleOnly` name one portal and are refused in multi mode, where each portal has its own.
 */
export const PORTAL_SETTINGS = scoped('portal', {
  ...section('Portal: webhook mode', {
    B24_WEBHOOK_URL: singleOnly(
      'each portal comes from its install',
      secret(
        optional(
          "secret: the portal's inbound webhook, https://portal.example.com/rest/<user_id>/<code>/",
          Matches(/^https?:\/\/[^/]+(\/.*)?\/rest\/\d+\/[^/]+\/?$/, {
            message: 'B24_WEBHOOK_URL must look like https://portal.example.com/rest/<user_id>/<code>/',
          }),
        ),
      ),
    ),
    B24_AUTH_MODE: oneOf(
      ['webhook', 'oauth'],
      undefined,
      'webhook or oauth; inferred (oauth when only B24_PORTAL_URL is set), needed only when both are configured',
    ),
    B24_API_VERSION: oneOf(
      ['v1'],
      undefined,
      "v1: the portal's REST API version 1 (header API-Version: v1, or /rest/v1/ for OAuth)",
    ),
    PORTAL_ID: singleOnly(
      "each portal's id is its member_id",
      optional(
        "the key the store files this portal's data under; unset: the portal's host name (sandbox in sandbox mode)",
        Matches(PORTAL_ID_PATTERN, {
          message: 'PORTAL_ID must be 1-100 letters, digits, dots, colons or dashes',
        }),
      ),
    ),
    B24_APPLICATION_TOKEN: secret(
      optional(
        "secret (webhook mode): the outbound webhook's authentication code; its event posts to /v1/portal/events carry it",
      ),
    ),
  }),
  ...section('Portal: OAuth application mode', {
    B24_PORTAL_URL: singleOnly(
      'each portal comes from its install',
      optional(
        "the portal's base URL, https://portal.example.com",
        baseUrl('B24_PORTAL_URL', 'https://portal.example.com'),
      ),
    ),
    B24_EVENTS: oneOf(
      ['online', 'offline'],
      'online',
      "how the portal's events reach the bridge: online (posted to PUBLIC_URL) or offline (the bridge polls event.offline.get)",
      { emptyIsDefault: true },
    ),
    B24_LINE_NUMBER: text(
      'pbx-bridge',
      "the line of calls whose PBX names none (register's LINE_NUMBER), and the line the bridge registers on the portal\nin OAuth mode (telephony.externalLine.add): choose it as the default outgoing number",
      ...EMPTY_IS_DEFAULT,
      Matches(/^[\w.+-]{1,50}$/, {
        message: 'B24_LINE_NUMBER must be 1-50 letters, digits, dots, pluses or dashes',
      }),
    ),
  }),
  ...section('PBX intake', {
    PBX_TOKENS: singleOnly(
      'PBX tokens belong to one portal: POST /v1/admin/portals/:portalId/pbx-tokens',
      secret(
        list(
          'secret: comma-separated tokens a PBX sends as Bearer or Basic password (required in production, 16+ characters each)',
          IsString({ each: true }),
        ),
      ),
    ),
    HOLD_ENDED_WITHOUT_START_SEC: int(
      3600,
      { min: 1 },
      'how long a call.ended without direction and phone number waits for its call.started',
    ),
    DEFAULT_COUNTRY: optional(
      'ISO 3166 country (DE) of phone numbers written nationally',
      Matches(/^[A-Z]{2}$/, { message: 'DEFAULT_COUNTRY must be an ISO 3166 alpha-2 code such as DE' }),
    ),
    PBX_INTERNAL_MAX_DIGITS: int(
      6,
      { min: 1, max: 15 },
      'without direction: a number of at most this many digits is an internal extension (1-15)',
    ),
    PBX_TIME_ZONE: text(
      'UTC',
      'IANA time zone of PBXs that post local times without an offset',
      Transform(({ value }) => (value === '' ? 'UTC' : value)),
      ianaZone('PBX_TIME_ZONE'),
    ),
    PBX_EVENTS: singleOnly(
      perPortal('a PBX is followed for one portal', 'follow'),
      oneOf(
        ['ami', 'esl'],
        undefined,
        'follow the PBX itself (docs/PBX.md): ami logs in to AMI_URL, esl to ESL_URL (FreeSWITCH), both in the next section; unset: posted events only',
        { message: 'PBX_EVENTS must be ami or esl (or unset: posted events only)' },
      ),
    ),
    PBX_TRUNKS: list(
      'with PBX_EVENTS: comma-separated channel patterns of trunks (PJSIP/trunk*); unset: an endpoint named by an internal number is a phone',
      IsString({ each: true }),
      Matches(/^[^\s,]+$/, {
        each: true,
        message: 'PBX_TRUNKS must be comma-separated channel patterns like PJSIP/trunk*',
      }),
      // A tenant's text (a portal's follow settings): bounded, so matching every channel name stays cheap.
      ArrayMaxSize(TRUNK_PATTERNS_MAX, {
        message: `PBX_TRUNKS takes at most ${TRUNK_PATTERNS_MAX} patterns`,
      }),
      MaxLength(TRUNK_PATTERN_MAX_LENGTH, {
        each: true,
        message: `PBX_TRUNKS patterns are at most ${TRUNK_PATTERN_MAX_LENGTH} characters each`,
      }),
    ),
    ASTERISK_CDR_URL: singleOnly(
      perPortal("the CDR ledger is one portal's setting", 'follow'),
      secret(
        optional(
          "secret: FreePBX's CDR database as the ledger (calls that ended while the AMI connection or the bridge was down), mysql://user:password@host:3306/asteriskcdrdb (?ssl=true for TLS, certificate and name checked; any character in the password); with PBX_EVENTS=ami or alone",
          credentialUrl('ASTERISK_CDR_URL'),
        ),
      ),
    ),
    YEASTAR_RECORDING_URL: recordingUrl(
      'YEASTAR_RECORDING_URL',
      "where Yeastar's recording file names are served: base URL, or template with {file}/{path} (docs/PBX.md)",
    ),
    ASTERISK_RECORDING_URL: recordingUrl(
      'ASTERISK_RECORDING_URL',
      "where Asterisk's recordingfile / MIXMONITOR_FILENAME are served (e.g. https://pbx.local/monitor/{file})",
    ),
    FREESWITCH_RECORDING_URL: recordingUrl(
      'FREESWITCH_RECORDING_URL',
      "where FreeSWITCH's record_path files are served (e.g. https://pbx.local/{path})",
    ),
  }),
  ...section(
    'The connection to the PBX: PBX events (PBX_EVENTS) and click-to-call (DIAL_MODE) (docs/PBX.md)',
    {
      AMI_URL: secret(
        optional(
          'secret: Asterisk Manager Interface, tcp://user:secret@host:5038, or tls://…:5039 for PBX_EVENTS; PBX_EVENTS=ami follows the PBX through it (the manager user needs the read rights of docs/PBX.md), DIAL_MODE=ami dials clicks (the user needs originate)',
          credentialUrl('AMI_URL'),
        ),
      ),
      ESL_URL: secret(
        optional(
          'secret: FreeSWITCH event socket, tcp://:password@host:8021, or tls://…:port behind a TLS terminator such as stunnel (PBX_EVENTS=esl); PBX_EVENTS=esl follows the PBX through it, DIAL_MODE=esl dials clicks; any character in the password',
          credentialUrl('ESL_URL'),
        ),
      ),
    },
  ),
  ...section("Delivery and the portal's budget", {
    B24_RATE_LIMIT_RPS: positive(2, "the portal's request budget: requests per second it drains"),
    B24_RATE_BURST: int(50, { min: 1 }, 'the size of that bucket'),
    B24_BATCH_SIZE: int(50, { min: 1, max: 50 }, 'commands per batch request (at most 50)'),
    B24_TIMEOUT_MS: int(15000, { min: 100 }, 'per request to the portal, in milliseconds'),
    B24_OPERATING_LIMIT_SEC: positive(
      480,
      "the portal's operating-time limit: server seconds one method may use within the window (real portals: 480)",
    ),
    B24_OPERATING_WINDOW_SEC: int(
      600,
      { min: 1 },
      'the sliding window of that limit, in seconds (real portals: 600)',
    ),
    DELIVERY_MAX_IN_FLIGHT: int(
      16,
      { min: 1, max: 64 },
      'the most batch requests in flight to the portal at once; within it the bridge keeps as many as its answer time needs',
    ),
    DELIVERY_MAX_BACKOFF_SEC: int(
      300,
      { min: 1 },
      'the longest wait between retries of one call while the portal fails, in seconds',
    ),
    DELIVERY_MAX_ATTEMPTS: int(
      20,
      { min: 1 },
      "refusals of one call's step before the bridge gives the step up",
    ),
    B24_DEFAULT_USER_ID: optionalInt(
      'the portal user a call goes to when the PBX names no employee the portal knows',
      IsPositive(),
    ),
    APP_PAGE_RECHECK_SEC: int(
      300,
      { min: 0 },
      "the application's page: seconds after which the portal is asked again whether its user is still an administrator (0: every page)",
    ),
    B24_BIND_CRM_ENTITY: flag(
      "1: a registered call is bound to the CRM client the lookup finds instead of the portal's choice",
    ),
    MISSED_CALL_TASK: flag(
      "1: an inbound call that ends missed, busy or cancelled gives its client's responsible employee a task",
    ),
    MISSED_CALL_TASK_DEADLINE_MIN: int(
      60,
      { min: 1 },
      "minutes from the end of a missed call to its task's deadline",
    ),
    DIAL_MATCH_SEC: int(
      60,
      { min: 1 },
      "click-to-call: a PBX outbound call without CRM_CALL_ID is the click's call when it goes from the clicking\nemployee's extension to the clicked number and starts within this many seconds of the click",
    ),
  }),
  ...section('Lines (docs/API.md)', {
    LINES: singleOnly(
      'each portal has its own lines: PATCH /v1/admin/portals/:portalId {"lines": […]}',
      json<LineRule[]>(
        [],
        'the company\'s lines and their rules, a JSON array of {"number", "name", "crmCreate", "crmSource", "defaultUserId",\n"report", "missedCallTask"}: crmCreate false registers with CRM_CREATE=0, crmSource is sent as CRM_SOURCE,\ndefaultUserId goes before B24_DEFAULT_USER_ID, report false keeps the line\'s calls off the portal, missedCallTask\noverrides MISSED_CALL_TASK; a line not listed follows the defaults',
        lineRules('LINES'),
      ),
    ),
  }),
  ...section('CRM lookups', {
    LOOKUP_DEADLINE_MS: int(
      1500,
      { min: 50 },
      'how long GET /v1/lookup waits for the portal on a cache miss, in milliseconds',
    ),
    LOOKUP_CACHE_TTL_SEC: int(
      300,
      { min: 0 },
      'how long a lookup answer is served from the cache, in seconds',
    ),
    LOOKUP_CACHE_SIZE: int(10000, { min: 1 }, 'how many phone numbers the lookup cache holds'),
    EMPLOYEE_REFRESH_SEC: int(
      300,
      { min: 1 },
      'how often the employee directory is read again from the portal, in seconds',
    ),
  }),
  ...section('Recordings (docs/API.md)', {
    // One host list and one credential for every tenant would let one portal's PBX have another's files
    // fetched with the shared credential: each portal sets its own.
    RECORDING_FETCH_HOSTS: singleOnly(
      perPortal('recording hosts belong to one portal', 'recordingFetch'),
      list(
        'comma-separated hosts the bridge may download recordings from (pbx.local, 10.0.0.5:8080, *.pbx.example.com); unset: never downloads',
        hostPatterns('RECORDING_FETCH_HOSTS'),
      ),
    ),
    RECORDING_FETCH_AUTH: singleOnly(
      perPortal('recording credentials belong to one portal', 'recordingFetch'),
      secret(
        optional(
          'secret: credentials for those downloads, basic:user:password or bearer:token',
          credentials('RECORDING_FETCH_AUTH'),
        ),
      ),
    ),
    RECORDING_KEEP_HOURS: int(
      72,
      { min: 1 },
      'a recording still held this long after it was stored (its call never settled) is deleted, in hours',
    ),
    RECORDING_WAIT_SEC: int(
      900,
      { min: 0 },
      'how long after the call ended a recording not there yet (404, 409, 425, 503, refused) is retried, in seconds',
    ),
    RECORDING_REQUEST_MAX_MB: positive(
      8,
      "file bytes (after base64) one portal request may carry, in MB; larger files go through the portal's uploadUrl",
      31,
    ),
  }),
  // SPEC §12: the service is the deployment's (the same for every portal, like RECORDING_WAIT_SEC); in
  // multi mode each portal's admin turns transcripts on (`transcribe`).
  ...section('Transcripts (docs/OPERATIONS.md "Transcripts")', {
    TRANSCRIBE_URL: optional(
      'an OpenAI-compatible transcription endpoint, …/v1/audio/transcriptions (the hosted service, or a self-hosted whisper.cpp server, faster-whisper server, LocalAI); unset: no transcripts',
      Matches(/^https?:\/\/[^\s/@]+(\/\S*)?$/, {
        message:
          'TRANSCRIBE_URL must be an http(s) URL without user:password (the key goes in TRANSCRIBE_AUTH)',
      }),
    ),
    TRANSCRIBE_AUTH: secret(
      optional(
        "secret: the service's key, bearer:<key>",
        Matches(/^bearer:\S+$/, { message: 'TRANSCRIBE_AUTH must be bearer:<key>' }),
      ),
    ),
    TRANSCRIBE_MODEL: text(
      'whisper-1',
      'the model field sent to the service',
      IsString(),
      Matches(/^[\w.:/-]{1,100}$/, { message: 'TRANSCRIBE_MODEL must be a model name such as whisper-1' }),
    ),
    TRANSCRIBE_LANGUAGE: optional(
      'an ISO 639-1 code sent as language (en, de, ru); unset: the service detects it',
      Matches(/^[a-z]{2}$/, { message: 'TRANSCRIBE_LANGUAGE must be an ISO 639-1 code such as en' }),
    ),
    TRANSCRIBE_FIRST_CHANNEL: oneOf(
      ['caller', 'callee'],
      'caller',
      "who speaks on a two-channel recording's first channel: caller (the party that placed the call; FreePBX and FreeSWITCH record on the calling leg) or callee",
      { message: 'TRANSCRIBE_FIRST_CHANNEL must be caller or callee' },
    ),
    TRANSCRIBE_CONCURRENCY: int(
      2,
      { min: 1, max: 32 },
      'recordings at the service at once (and in memory), whatever the backlog',
    ),
    TRANSCRIBE_WAIT_SEC: int(
      3600,
      { min: 0 },
      'how long a service that is down, overloaded (429) or failing (5xx) is retried, in seconds',
    ),
  }),
  ...section('Click-to-call (docs/PBX.md; AMI_URL and ESL_URL above)', {
    DIAL_MODE: singleOnly(
      "the dial settings name one portal's PBX",
      oneOf(
        ['ami', 'esl', 'http'],
        undefined,
        'how the PBX is asked to dial a click: ami (Asterisk), esl (FreeSWITCH) or http; unset: click-to-call is off',
        { message: 'DIAL_MODE must be ami, esl or http' },
      ),
    ),
    AMI_CHANNEL: text(
      'PJSIP/{extension}',
      "the Originate's Channel; {extension} is the clicking employee's internal number",
      IsString(),
      Matches(/\{extension\}/, { message: 'AMI_CHANNEL must contain {extension}' }),
    ),
    AMI_CONTEXT: text(
      'from-internal',
      'the dialplan context the number is dialled in',
      IsString(),
      Matches(/^[\w-]+$/, { message: 'AMI_CONTEXT must be a dialplan context name' }),
    ),
    ESL_ORIGINATE: text(
      '{crm_call_id={crmCallId},crm_line={line}}user/{extension} {number} XML default',
      "the arguments of bgapi originate; {crmCallId}, {extension}, {number}, {userId}, {line} (the click's line, empty when none) are filled in",
      IsString(),
      Matches(/^[^\r\n]+$/, { message: 'ESL_ORIGINATE must be one line' }),
    ),
    DIAL_URL: optional(
      "with DIAL_MODE http: URL template with {extension}, {number}, {crmCallId}, {userId}, {line} (the click's line, empty when none; URL-encoded)",
      Matches(/^https?:\/\/\S+$/i, { message: 'DIAL_URL must be an http(s) URL template' }),
      usableDialUrl(),
    ),
    DIAL_METHOD: oneOf(['POST', 'GET'], 'POST', 'with DIAL_MODE http: POST (JSON body) or GET', {
      message: 'DIAL_METHOD must be POST or GET',
    }),
    DIAL_AUTH: secret(
      optional(
        'secret: credentials for DIAL_URL, basic:user:password or bearer:token',
        credentials('DIAL_AUTH'),
      ),
    ),
    DIAL_TIMEOUT_SEC: int(
      30,
      { min: 1, max: 600 },
      "seconds a click is retried while the PBX cannot be reached; then the portal's call is finished as failed",
    ),
  }),
});
