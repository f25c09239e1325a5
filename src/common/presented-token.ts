import type { Request } from 'express';

/** Adapter routes: a PBX that cannot set a header (Yeastar's webhook) may put the token in the query. */
const QUERY_TOKEN_ROUTES = '/v1/pbx/';

/**
 * The token a request carries: `Authorization: Bearer <token>`, or HTTP Basic with the token as password;
 * on the adapter routes also `?token=<token>` when no Authorization header is sent.
 */
export function presentedToken(request: Request): string | undefined {
  const header = request.headers.authorization;
  return header ? headerToken(header) : queryToken(request);
}

function headerToken(header: string): string | undefined {
  const [scheme, value] = header.split(' ', 2);
  if (!value) return undefined;
  if (scheme.toLowerCase() === 'bearer') return value.trim();
  if (scheme.toLowerCase() === 'basic') {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return colon >= 0 ? decoded.slice(colon + 1) : undefined;
  }
  return undefined;
}

function queryToken(request: Request): string | undefined {
  const path = (request.originalUrl ?? request.url ?? '').split('?', 1)[0];
  if (!path.startsWith(QUERY_TOKEN_ROUTES)) return undefined;
  const token = request.query?.token;
  return typeof token === 'string' && token !== '' ? token : undefined;
}
