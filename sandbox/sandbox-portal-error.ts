import { portalTime } from './envelope';
import { MethodOperating } from './operating-time';

/**
 * An error the portal answers with: `{"error": CODE, "error_description": text}` and an HTTP status.
 * Thrown by methods and by the request pipeline; the router turns it into the response body.
 */
export class SandboxPortalError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly description: string,
    /** Extra top-level fields of the error body (OPERATION_TIME_LIMIT carries `time`). */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(`${code}: ${description}`);
  }

  body(): Record<string, unknown> {
    return { error: this.code, error_description: this.description, ...this.extra };
  }
}

export function isSandboxPortalError(error: unknown): error is SandboxPortalError {
  return error instanceof SandboxPortalError;
}

/** The errors a real portal gives for the situations the sandbox reproduces; texts as the vendor writes them. */
export const portalErrors = {
  noAuth: () => new SandboxPortalError(401, 'NO_AUTH_FOUND', 'Wrong authorization data'),
  invalidCredentials: () => new SandboxPortalError(401, 'INVALID_CREDENTIALS', 'Invalid request credentials'),
  invalidToken: () => new SandboxPortalError(401, 'invalid_token', 'The access token provided is invalid.'),
  expiredToken: (code: string) => new SandboxPortalError(401, code, 'The access token provided has expired.'),
  insufficientScope: (kind: 'webhook' | 'oauth') =>
    new SandboxPortalError(
      403,
      'insufficient_scope',
      `The request requires higher privileges than provided by the ${kind === 'webhook' ? 'webhook' : 'access'} token`,
    ),
  methodNotFound: () => new SandboxPortalError(404, 'ERROR_METHOD_NOT_FOUND', 'Method not found!'),
  queryLimitExceeded: () => new SandboxPortalError(503, 'QUERY_LIMIT_EXCEEDED', 'Too many requests'),
  /** The method used more than its operating time in the window: blocked until part of it is freed. */
  operationTimeLimit: (now: number, use: MethodOperating) =>
    new SandboxPortalError(429, 'OPERATION_TIME_LIMIT', 'Method is blocked due to operation time limit.', {
      time: portalTime(now, now, use.resetAt, use.usedSec),
    }),
  batchTooLong: () => new SandboxPortalError(400, 'ERROR_BATCH_LENGTH_EXCEEDED', 'Max batch length exceeded'),
  batchNested: () =>
    new SandboxPortalError(400, 'ERROR_BATCH_METHOD_NOT_ALLOWED', 'Method is not allowed for batch usage'),
  /** Validation errors of telephony and CRM methods come with an empty code, as on real portals. */
  validation: (description: string) => new SandboxPortalError(400, '', description),
  invalidArgument: (description: string) => new SandboxPortalError(400, 'INVALID_ARGUMENT', description),
  invalidRequest: (description: string) => new SandboxPortalError(400, 'INVALID_REQUEST', description),
  core: (description: string) => new SandboxPortalError(400, 'ERROR_CORE', description),
  /** event.bind of a handler the application bound already. */
  handlerExists: () =>
    new SandboxPortalError(400, 'ERROR_EVENT_HANDLER_ALREADY_EXISTS', 'Handler already binded'),
  notFound: () => new SandboxPortalError(400, '', 'Not found'),
  tooLarge: (limitBytes: number) =>
    new SandboxPortalError(
      413,
      'INVALID_REQUEST',
      `POST request size exceeds the limit of ${Math.round(limitBytes / 1024 / 1024)} MB`,
    ),
};
