import { Agent as HttpAgent, IncomingHttpHeaders, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Readable } from 'node:stream';

/** A transport failure: no usable answer. `code` is the socket's (ECONNREFUSED…), or one of the below. */
export class PortalHttpError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The answer took longer than the request's timeout. */
export const TIMED_OUT = 'ETIMEDOUT';
/** The caller's signal ended the request. */
export const ABORTED = 'ECONNABORTED';
/** The answer was larger than `maxAnswerBytes`. */
export const TOO_LARGE = 'ANSWER_TOO_LARGE';

export interface PortalHttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body parsed as JSON, or its text when it is not JSON ('' when empty). */
  data: unknown;
}

export interface PortalHttpOptions {
  headers: Record<string, string>;
  timeoutMs: number;
  maxAnswerBytes: number;
  signal?: AbortSignal;
}

/**
 * The portal's HTTP: one JSON POST, its answer read whole and parsed, on keep-alive agents. Node's own
 * client, not a general-purpose one: a portal request is the bridge's most frequent outgoing work, and a
 * general client's configuration merging, header normalising and transform chains cost more CPU than the
 * request itself. Redirects are the caller's (never followed here); answers compressed with gzip, deflate or
 * brotli are inflated; the timeout covers the whole exchange, from sending to the last byte of the answer.
 */
export class PortalHttp {
  private readonly http: HttpAgent;
  private readonly https: HttpsAgent;

  constructor(maxSockets: number) {
    this.http = new HttpAgent({ keepAlive: true, maxSockets });
    this.https = new HttpsAgent({ keepAlive: true, maxSockets });
  }

  post(url: string, body: unknown, options: PortalHttpOptions): Promise<PortalHttpAnswer> {
    const payload = Buffer.from(JSON.stringify(body) ?? 'null', 'utf8');
    const secure = url.startsWith('https:');
    return new Promise((resolve, reject) => {
      let settled = false;
      const finish = (error: PortalHttpError | undefined, answer?: PortalHttpAnswer) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        if (error) {
          request.destroy();
          reject(error);
        } else {
          resolve(answer as PortalHttpAnswer);
        }
      };
      const onAbort = () => finish(new PortalHttpError(ABORTED, 'the request was abandoned'));
      const request = (secure ? httpsRequest : httpRequest)(url, {
        method: 'POST',
        agent: secure ? this.https : this.http,
        headers: {
          Accept: 'application/json',
          'Accept-Encoding': 'gzip, deflate, br',
          'Content-Type': 'application/json',
          'Content-Length': String(payload.length),
          'User-Agent': 'pbx-crm-bridge',
          ...options.headers,
        },
      });
      const timer = setTimeout(
        () => finish(new PortalHttpError(TIMED_OUT, 'the portal did not answer in time')),
        options.timeoutMs,
      );
      if (options.signal?.aborted) return onAbort();
      options.signal?.addEventListener('abort', onAbort, { once: true });
      request.on('error', (error: NodeJS.ErrnoException) =>
        finish(new PortalHttpError(error.code ?? 'NETWORK', error.message)),
      );
      request.on('response', (response) => {
        const failed = (error: NodeJS.ErrnoException) =>
          finish(new PortalHttpError(error.code ?? 'NETWORK', error.message));
        // The connection lost before the answer's end (`error` on the answer itself, not passed through a pipe).
        response.on('error', failed);
        response.on('close', () => {
          if (!response.complete) {
            failed(Object.assign(new Error('the answer was cut off'), { code: 'ECONNRESET' }));
          }
        });
        const stream = decoded(response, response.headers['content-encoding']);
        const chunks: Buffer[] = [];
        let bytes = 0;
        stream.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (bytes > options.maxAnswerBytes) {
            return finish(new PortalHttpError(TOO_LARGE, 'the answer is too large'));
          }
          chunks.push(chunk);
        });
        if (stream !== response) stream.on('error', failed);
        stream.on('end', () => {
          const text =
            chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8');
          finish(undefined, {
            status: response.statusCode ?? 0,
            headers: response.headers,
            data: parsed(text),
          });
        });
      });
      request.end(payload);
    });
  }
}

function decoded(response: Readable, encoding: string | undefined): Readable {
  switch (encoding?.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return response.pipe(createGunzip());
    case 'deflate':
      return response.pipe(createInflate());
    case 'br':
      return response.pipe(createBrotliDecompress());
    default:
      return response;
  }
}

/** JSON when the text is JSON, else the text itself. */
function parsed(text: string): unknown {
  if (text === '') return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
