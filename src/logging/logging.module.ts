import { Module, RequestMethod } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoggerModule } from 'nestjs-pino';
import pinoPretty from 'pino-pretty';
import { LogLevel } from '../config/app-config';
import { LoggingSettings } from '../config/settings';

/** LOG_LEVEL takes pino's names and Nest's; Nest's `log` and `verbose` are pino's `info` and `trace`. */
const PINO_LEVEL: Record<LogLevel, string> = {
  silent: 'silent',
  fatal: 'fatal',
  error: 'error',
  warn: 'warn',
  info: 'info',
  log: 'info',
  debug: 'debug',
  verbose: 'trace',
  trace: 'trace',
};

/** Query parameters whose values are secrets (OAuth codes, tokens) and are never written to a log. */
// `auth[application_token]=…` (a portal post's fields, bracketed or percent-encoded) counts as `auth`.
const SECRET_QUERY =
  /([?&](?:code|state|auth|auth_id|refresh_id|access_token|refresh_token|token|application_token|auth(?:\[|%5B)[^=&]*)=)[^&]*/gi;
/** The application page's session rides in its path (`/app/s/<session>/…`): a credential for minutes. */
const SESSION_PATH = /^(\/app\/s\/)[^/?]+/;

export function redactUrl(url: string | undefined): string | undefined {
  return url?.replace(SECRET_QUERY, '$1[Redacted]').replace(SESSION_PATH, '$1[Redacted]');
}

const REQUEST_ID = /^[\w.-]{1,64}$/;

/** The request's id: the caller's `X-Request-Id` when sane, else a new one; echoed in the answer. */
export function requestId(request: IncomingMessage, response: ServerResponse): string {
  const given = request.headers['x-request-id'];
  const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  response.setHeader('X-Request-Id', id);
  return id;
}

/**
 * Probes and scrapes are never logged, so they skip pino-http altogether (its per-request child logger,
 * serialisers and listeners were a third of a probe's cost); `probeRequestIds` still gives them their id.
 */
export const UNLOGGED_ROUTES = ['health/live', 'health/ready', 'metrics'];

/** Express middleware for the routes in UNLOGGED_ROUTES: the same `X-Request-Id` as every other answer. */
export function probeRequestIds(request: IncomingMessage, response: ServerResponse, next: () => void): void {
  requestId(request, response);
  next();
}

/** A request as pino-http hands it to the message callbacks: only what the short line needs. */
interface LoggedRequest {
  method?: string;
  url?: string;
  originalUrl?: string;
}

/** `POST /v1/calls/events 202 4 ms`: the request line of the pretty format (JSON keeps every field). */
function requestLine(request: LoggedRequest, response: ServerResponse, ms?: number): string {
  const url = redactUrl(request.originalUrl ?? request.url) ?? '';
  const took = ms === undefined ? '' : ` ${Math.round(ms)} ms`;
  return `${request.method} ${url} ${response.statusCode}${took}`;
}

/**
 * Readable lines for a person at a terminal, written synchronously in this process (no worker thread: a
 * crash's last lines are not lost). The fields the message already says, and the request's headers, are
 * left out; anything else (an error's stack) follows on the same line.
 */
function prettyStream() {
  return pinoPretty({
    colorize: Boolean(process.stdout.isTTY),
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname,context,req,res,responseTime,reqId,callId,portalCallId,state,reason',
    messageFormat: '{if context}{context}: {end}{msg}',
    singleLine: true,
    sync: true,
  });
}

/**
 * The request headers a log line shows; every other header, whatever its name, is left out. A PBX may put
 * its token in any header (`X-Api-Key`, `X-Auth-Token: token=…`, a cookie, one of its own), so only an
 * allow-list keeps secrets out of the logs: a deny-list always misses the next name.
 */
export const LOGGED_REQUEST_HEADERS: readonly string[] = [
  'host',
  'user-agent',
  'content-type',
  'content-length',
  'content-encoding',
  'transfer-encoding',
  'accept',
  'accept-encoding',
  'connection',
  'x-request-id',
  'x-forwarded-for',
  'x-forwarded-proto',
];

/** The response headers a log line shows (not Set-Cookie, nor Location: a redirect may carry OAuth state). */
export const LOGGED_RESPONSE_HEADERS: readonly string[] = [
  'content-type',
  'content-length',
  'x-request-id',
  'retry-after',
  'cache-control',
  'connection',
];

/**
 * Only the allowed headers of `headers`; nothing else is copied. A Content-Type shows its media type only:
 * its parameters (`charset=…`) are the caller's free text.
 */
export function allowedHeaders(
  headers: Record<string, unknown> | undefined,
  allowed: readonly string[],
): Record<string, unknown> {
  const shown: Record<string, unknown> = {};
  if (!headers) return shown;
  for (const name of allowed) {
    const value = headers[name];
    if (value === undefined) continue;
    shown[name] =
      name === 'content-type' && typeof value === 'string' ? value.split(';', 1)[0].trim() : value;
  }
  return shown;
}

/**
 * Structured JSON logs (pino): one line per request with a request id (the caller's `X-Request-Id` when
 * sane, else a new one, echoed back). Secrets never reach them: headers are logged from an allow-list
 * (LOGGED_REQUEST_HEADERS, LOGGED_RESPONSE_HEADERS), OAuth codes and tokens in the query string are
 * redacted; webhook URLs are never logged by the bridge's own code. LOG_FORMAT=pretty (the default on a
 * terminal) writes the same records as readable lines, a request in one short line.
 */
@Module({
  imports: [
    LoggerModule.forRootAsync({
      inject: [LoggingSettings],
      useFactory: (logging: LoggingSettings) => {
        const pretty = logging.format === 'pretty';
        const options = {
          level: PINO_LEVEL[logging.level],
          // Logs inside a request carry only its id; the request itself is serialised once, on completion.
          quietReqLogger: true,
          genReqId: requestId,
          serializers: {
            req: (request: {
              id: unknown;
              method: string;
              url: string;
              headers: Record<string, unknown>;
            }) => ({
              id: request.id,
              method: request.method,
              url: redactUrl(request.url),
              headers: allowedHeaders(request.headers, LOGGED_REQUEST_HEADERS),
            }),
            res: (response: { statusCode: number; headers?: Record<string, unknown> }) => ({
              statusCode: response.statusCode,
              headers: allowedHeaders(response.headers, LOGGED_RESPONSE_HEADERS),
            }),
          },
          ...(pretty && {
            customSuccessMessage: (request: LoggedRequest, response: ServerResponse, ms: number) =>
              requestLine(request, response, ms),
            customErrorMessage: (request: LoggedRequest, response: ServerResponse) =>
              requestLine(request, response),
          }),
        };
        return {
          pinoHttp: pretty ? ([options, prettyStream()] as const) : options,
          exclude: UNLOGGED_ROUTES.map((path) => ({ method: RequestMethod.GET, path })),
        };
      },
    }),
  ],
})
export class LoggingModule {}
