import { IncomingMessage, ServerResponse } from 'node:http';
import * as qs from 'qs';
import { isPlainObject, Params } from './params';
import { portalErrors } from './sandbox-portal-error';

/** The portal's POST size limit. */
export const MAX_BODY_BYTES = 32 * 1024 * 1024;
/** Past this a client is not worth draining for the 413 answer; its socket is cut. */
const MAX_DRAIN_BYTES = 4 * MAX_BODY_BYTES;

/** Nested form and query parameters (`fields[TITLE]=`, `SELECT[]=`, `cmd[label]=`) decoded as PHP does. */
export function parseFormParams(text: string): Params {
  return qs.parse(text, {
    depth: 20,
    arrayLimit: 1000,
    parameterLimit: 100000,
    ignoreQueryPrefix: true,
  }) as Params;
}

/**
 * The body, or null when it is larger than `limit`: then it is read to its end and thrown away, so the
 * client sees the 413 answer instead of a reset connection.
 */
export function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_DRAIN_BYTES) req.destroy();
      else if (size <= limit) chunks.push(chunk);
      else chunks.length = 0;
    });
    req.on('end', () => resolve(size > limit ? null : Buffer.concat(chunks)));
    req.on('error', reject);
    req.on('close', () => {
      if (!req.complete) reject(new Error('request aborted'));
    });
  });
}

/** Parameters from a JSON or form-encoded body; a body that cannot be decoded is a 400. */
export function parseBodyParams(contentType: string | undefined, body: Buffer): Params {
  const text = body.toString('utf8');
  if (text.trim() === '') return {};
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  const looksJson =
    type === 'application/json' || type.endsWith('+json') || (type === '' && /^\s*[{[]/.test(text));
  if (!looksJson) return parseFormParams(text);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw portalErrors.invalidRequest('Request body is not valid JSON');
  }
  if (!isPlainObject(parsed)) throw portalErrors.invalidRequest('Request body must be a JSON object');
  return parsed;
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.writableEnded || res.destroyed) return;
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(payload)),
    ...headers,
  });
  res.end(payload);
}

export function sendRedirect(res: ServerResponse, status: number, location: string): void {
  if (res.writableEnded || res.destroyed) return;
  res.writeHead(status, { Location: location, 'Content-Length': '0' });
  res.end();
}
