/**
 * What a portal answer means for the caller (how real portals behave "Errors"). Decided from the body's error code
 * first and the HTTP status second, since some validation errors come as HTTP 400 with an empty code.
 */
export type PortalErrorKind =
  | 'budget' // 503 QUERY_LIMIT_EXCEEDED: over the request budget
  | 'operation-limit' // 429 OPERATION_TIME_LIMIT: method blocked until operating_reset_at
  | 'token-expired' // refresh the token, retry once
  | 'credentials' // wrong webhook code or token: an operator must act
  | 'rights' // missing scope or rights: an operator must act
  | 'invalid' // bad parameters: retrying changes nothing
  | 'method-not-found'
  | 'server' // 5xx: retry with backoff
  | 'network' // no answer at all: retry with backoff
  | 'timeout';

const RETRYABLE: ReadonlySet<PortalErrorKind> = new Set([
  'budget',
  'operation-limit',
  'token-expired',
  'server',
  'network',
  'timeout',
]);

export class PortalError extends Error {
  constructor(
    readonly kind: PortalErrorKind,
    readonly code: string,
    readonly description: string,
    readonly status?: number,
    /** For operation-limit: when the portal unblocks the method (ms epoch). */
    readonly resumeAt?: number,
  ) {
    super(`${status ? `HTTP ${status} ` : ''}${code || 'error'}: ${description}`);
    this.name = 'PortalError';
  }

  get retryable(): boolean {
    return RETRYABLE.has(this.kind);
  }
}

const EXPIRED = new Set(['expired_token', 'INVALID_TOKEN']);
const CREDENTIALS = new Set([
  'invalid_token',
  'NO_AUTH_FOUND',
  'INVALID_CREDENTIALS',
  'invalid_client',
  'invalid_grant',
]);
const RIGHTS = new Set(['insufficient_scope', 'ACCESS_DENIED', 'access_denied', 'WRONG_AUTH_TYPE']);

export function classifyPortalError(
  code: string,
  description: string,
  status?: number,
  operatingResetAt?: number,
): PortalError {
  const kind = kindOf(code, status);
  const resumeAt = kind === 'operation-limit' && operatingResetAt ? operatingResetAt * 1000 : undefined;
  return new PortalError(kind, code, description, status, resumeAt);
}

function kindOf(code: string, status?: number): PortalErrorKind {
  if (code === 'QUERY_LIMIT_EXCEEDED' || code === 'RATE_LIMIT_EXCEEDED') return 'budget';
  if (code === 'OPERATION_TIME_LIMIT') return 'operation-limit';
  if (EXPIRED.has(code)) return 'token-expired';
  if (CREDENTIALS.has(code)) return 'credentials';
  if (RIGHTS.has(code)) return 'rights';
  if (code === 'ERROR_METHOD_NOT_FOUND') return 'method-not-found';
  if (code === 'INTERNAL_SERVER_ERROR') return 'server';
  if (status === undefined) return 'invalid';
  if (status === 503) return 'budget';
  if (status >= 500) return 'server';
  if (status === 401) return 'credentials';
  if (status === 403) return 'rights';
  if (status === 404 && !code) return 'method-not-found';
  if (status === 429) return 'operation-limit';
  return 'invalid';
}
