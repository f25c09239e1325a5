import { Injectable, Module, RequestMethod } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoggerModule } from 'nestjs-pino';
import { pino, type Logger } from 'pino';
import pinoPretty from 'pino-pretty';
import { LogLevel } from '../config/app-config';
import { LoggingSettings } from '../config/settings';

/** LOG_LEVEL takes pino's names and Nest's; Nest's `log` and `verbose` are pino's `info` and `trace`. */
const pinoLevel = (level: LogLevel): string => ({ log: 'info', verbose: 'trace' })[level as string] ?? level;

/**
 * The query parameters whose values a log line shows: the bridge's own harmless ones (docs/API.md: a
 * lookup's `phone`/`number`, an adapter's `tz`, a list's `limit`/`after`/`portal`, the page's `done`/`LANG`).
 * Every other parameter, whatever its name, is logged as `name=[Redacted]`, and a bare word (`?abc`) as
 * `[Redacted]`: a PBX may put its token under any name (`?key=…`), so only an allow-list keeps secrets out,
 * as for headers (LOGGED_REQUEST_HEADERS). Not `state`: OAuth's is a credential, as are `code` and `auth*`.
 */
export const LOGGED_QUERY_PARAMETERS: readonly string[] = [
  'phone',
  'number',
  'tz',
  'limit',
  'after',
  'portal',
  'done',
  'lang',
];
const SHOWN_QUERY = new Set(LOGGED_QUERY_PARAMETERS);
const REDACTED = '[Redacted]';
/** The application page's session rides in its path (`/app/s/<session>/…`): a credential for minutes. */
const SESSION_PATH = /^(\/app\/s\/)[^/?]+/;

/** A parameter's name as the allow-list compares it: decoded (`%70hone` is `phone`), any case. */
function parameterName(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' ')).toLowerCase();
  } catch {
    return undefined;
  }
}

function redactQuery(query: string): string {
  return query
    .split('&')
    .map((pair) => {
      if (pair === '') return pair;
      const equals = pair.indexOf('=');
      if (equals < 0) return REDACTED;
      const name = pair.slice(0, equals);
      return SHOWN_QUERY.has(parameterName(name) ?? '') ? pair : `${name}=${REDACTED}`;
    })
    .join('&');
}

/** A request's URL as every log line writes it: the session path and every value not allowed redacted. */
export function redactUrl(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  const question = url.indexOf('?');
  const path = (question < 0 ? url : url.slice(0, question)).replace(SESSION_PATH, `$1${REDACTED}`);
  return question < 0 ? path : `${path}?${redactQuery(url.slice(question + 1))}`;
}

const REQUEST_ID = /^[\w.-]{1,64}$/;

/** The request's id: the caller's `X-Request-Id` when sane, else a new one; echoed in the answer. */
export function requestId(request: IncomingMessage, response: ServerResponse): string {
  const given = request.headers['x-request-id'];
  const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  response.setHeader('X-Request-Id', id);
  return id;
}

/** Probes and scrapes are never logged: they only get their request id. */
export const UNLOGGED_ROUTES = ['health/live', 'health/ready', 'metrics'];
const UNLOGGED_PATHS = new Set(UNLOGGED_ROUTES.flatMap((path) => [`/${path}`, `/${path}/`]));

/** A request as the request log reads it: only what the line needs. */
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

type LogCall = (...args: unknown[]) => void;

/**
 * What `req.log` is for nestjs-pino's logger inside a request: the root logger bound to the request's id,
 * built only when something inside the request logs (most requests log nothing but their own line).
 */
function requestScopedLogger(root: Logger, id: string): Logger {
  let bound: Logger | undefined;
  const logger = () => (bound ??= root.child({ reqId: id }));
  const scoped: Record<string, unknown> = {
    child: (bindings: Record<string, unknown>) => logger().child(bindings),
  };
  for (const level of ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const) {
    scoped[level] = (...args: unknown[]) => (logger()[level] as LogCall)(...args);
  }
  // nestjs-pino reads `req.log` (typed as a pino logger) and calls its level methods and `child` only.
  return scoped as unknown as Logger;
}

/**
 * The request log: one line per request, written once when the answer is finished (or the connection
 * closed first), with the request and answer as the serialisers below show them. It does on the hot path
 * what pino-http did without its two child loggers per request (one of them serialising the request up
 * front): the id, a start time and one listener pair; the request is serialised only for its line.
 */
@Injectable()
export class RequestLog {
  readonly root: Logger;
  private readonly pretty: boolean;

  constructor(logging: LoggingSettings) {
    this.pretty = logging.format === 'pretty';
    const options = {
      level: pinoLevel(logging.level),
      serializers: { err: pino.stdSerializers.err },
    };
    this.root = this.pretty ? pino(options, prettyStream()) : pino(options);
  }

  /** Express middleware, ahead of every route: the request's id, and its line when it is done. */
  readonly middleware = (
    request: IncomingMessage & LoggedRequest & { id?: string },
    response: ServerResponse,
    next: () => void,
  ): void => {
    const id = requestId(request, response);
    request.id = id;
    if (request.method === 'GET' && UNLOGGED_PATHS.has((request.url ?? '').split('?', 1)[0])) return next();
    request.log = requestScopedLogger(this.root, id);
    const started = Date.now();
    let logged = false;
    const done = (error?: Error) => {
      if (logged) return;
      logged = true;
      response.removeListener('finish', onFinish);
      response.removeListener('close', onFinish);
      response.removeListener('error', done);
      this.write(request, response, id, Date.now() - started, error);
    };
    const onFinish = () => done();
    response.on('finish', onFinish);
    response.on('close', onFinish);
    response.on('error', done);
    next();
  };

  private write(
    request: IncomingMessage & LoggedRequest,
    response: ServerResponse,
    id: string,
    ms: number,
    error: Error | undefined,
  ): void {
    if (!this.root.isLevelEnabled('info')) return;
    const failed = error !== undefined || response.statusCode >= 500;
    const line: Record<string, unknown> = {
      reqId: id,
      req: {
        id,
        method: request.method,
        url: redactUrl(request.originalUrl ?? request.url),
        headers: allowedHeaders(request.headers, LOGGED_REQUEST_HEADERS),
      },
      res: {
        statusCode: response.statusCode,
        headers: allowedHeaders(response.getHeaders(), LOGGED_RESPONSE_HEADERS),
      },
      responseTime: ms,
    };
    if (failed) line.err = error ?? new Error(`failed with status code ${response.statusCode}`);
    const message = this.pretty
      ? requestLine(request, response, failed ? undefined : ms)
      : failed
        ? 'request errored'
        : 'request completed';
    this.root.info(line, message);
  }
}

/**
 * Structured JSON logs (pino): one line per request with a request id (the caller's `X-Request-Id` when
 * sane, else a new one, echoed back), written by `RequestLog`. Secrets never reach them: headers are logged
 * from an allow-list (LOGGED_REQUEST_HEADERS, LOGGED_RESPONSE_HEADERS), and so are query values
 * (LOGGED_QUERY_PARAMETERS: any other parameter's value is redacted); webhook URLs are never logged by the bridge's own code. LOG_FORMAT=pretty (the
 * default on a terminal) writes the same records as readable lines, a request in one short line. Logs
 * written inside a request carry its id (nestjs-pino binds `req.log` to the request's async context).
 */
@Module({
  imports: [
    LoggerModule.forRootAsync({
      providers: [RequestLog],
      inject: [RequestLog],
      useFactory: (requestLog: RequestLog) => ({
        pinoHttp: { logger: requestLog.root },
        useExisting: true,
        exclude: UNLOGGED_ROUTES.map((path) => ({ method: RequestMethod.GET, path })),
      }),
    }),
  ],
})
export class LoggingModule {}
