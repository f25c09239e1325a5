import { randomUUID } from 'node:crypto';
import { Agent, IncomingMessage, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { TranscriptSegment } from '../calls/call-transcript';
import { EgressPolicy } from '../common/egress';
import { ChannelFile } from './audio-channels';

/** What the service said to one file. */
export type TranscribeOutcome =
  | { kind: 'segments'; segments: TranscriptSegment[] }
  /** Down, overloaded (429) or failing (5xx), or the network: asked again later (`retryAfterMs`: its word). */
  | { kind: 'retry'; reason: string; retryAfterMs?: number }
  /** The service refuses the file (4xx): given up at once. */
  | { kind: 'refused'; reason: string };

export interface TranscribeClientOptions {
  url: string;
  /** The Authorization header value (a secret: never in a reason, a log or a body). */
  authorization?: string;
  model: string;
  language?: string;
  /** One file's request is abandoned when nothing moves for this long. */
  idleTimeoutMs: number;
  /** The operator's address: through the egress gate's agents like the other operator destinations. */
  egress: EgressPolicy;
}

/** The most of an answer read: verbose_json of a long call is some hundred KB. */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/** The longest Retry-After honoured (a longer one waits this long, then asks again). */
const MAX_RETRY_AFTER_MS = 600_000;

/**
 * An OpenAI-compatible transcription endpoint (SPEC §12): one file per request, `multipart/form-data` with
 * `file`, `model`, `response_format=verbose_json`, `timestamp_granularities[]=segment` and `language`; the
 * answer's `segments` come back. Reasons name the status and the service's own words, never the key.
 */
export class TranscribeClient {
  private readonly agents: { http: Agent; https: Agent };

  constructor(private readonly options: TranscribeClientOptions) {
    this.agents = { http: options.egress.agent(false), https: options.egress.agent(true) };
  }

  async transcribe(file: ChannelFile, signal?: AbortSignal): Promise<TranscribeOutcome> {
    const url = new URL(this.options.url);
    const boundary = `----bridge-${randomUUID()}`;
    const body = this.body(file, boundary);
    const tls = url.protocol === 'https:';
    try {
      const { status, text, retryAfter } = await new Promise<{
        status: number;
        text: string;
        retryAfter?: string;
      }>((resolve, reject) => {
        const send = tls ? httpsRequest : httpRequest;
        const request = send(url, {
          method: 'POST',
          agent: tls ? this.agents.https : this.agents.http,
          signal,
          headers: {
            'content-type': `multipart/form-data; boundary=${boundary}`,
            'content-length': String(body.length),
            accept: 'application/json',
            ...(this.options.authorization ? { authorization: this.options.authorization } : {}),
          },
        });
        request.setTimeout(this.options.idleTimeoutMs, () =>
          request.destroy(Object.assign(new Error('no progress'), { code: 'ETIMEDOUT' })),
        );
        request.once('error', reject);
        request.once('response', (response: IncomingMessage) => {
          const parts: Buffer[] = [];
          let read = 0;
          response.on('data', (chunk: Buffer) => {
            read += chunk.length;
            if (read > MAX_ANSWER_BYTES) response.destroy(new Error('the answer is too large'));
            else parts.push(chunk);
          });
          response.once('error', reject);
          response.once('end', () =>
            resolve({
              status: response.statusCode ?? 0,
              text: Buffer.concat(parts).toString('utf8'),
              retryAfter: response.headers['retry-after'],
            }),
          );
        });
        request.end(body);
      });
      return this.outcomeOf(status, text, retryAfter);
    } catch (error) {
      if (signal?.aborted) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      const what = code === 'ETIMEDOUT' ? 'nothing moved' : this.redact((error as Error).message);
      return { kind: 'retry', reason: `the service at ${url.host} could not be reached (${what})` };
    }
  }

  private body(file: ChannelFile, boundary: string): Buffer {
    const field = (name: string, value: string) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    const fields = [
      field('model', this.options.model),
      field('response_format', 'verbose_json'),
      field('timestamp_granularities[]', 'segment'),
      ...(this.options.language ? [field('language', this.options.language)] : []),
    ].join('');
    const name = file.name.replace(/["\r\n]/g, '_');
    const head =
      `${fields}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\n` +
      `Content-Type: ${file.type}\r\n\r\n`;
    return Buffer.concat([Buffer.from(head), file.data, Buffer.from(`\r\n--${boundary}--\r\n`)]);
  }

  private outcomeOf(status: number, text: string, retryAfter?: string): TranscribeOutcome {
    let body: { segments?: unknown; error?: { message?: unknown } | string; text?: unknown } = {};
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      // not JSON: judged by the status alone
    }
    if (status >= 200 && status < 300) {
      if (!Array.isArray(body.segments)) {
        // A service answering verbose_json without segments: whole text as one message is no timing.
        return typeof body.text === 'string' && body.text.trim() === ''
          ? { kind: 'segments', segments: [] }
          : { kind: 'refused', reason: 'the service answered without segments (verbose_json)' };
      }
      return { kind: 'segments', segments: body.segments as TranscriptSegment[] };
    }
    const said = typeof body.error === 'string' ? body.error : body.error?.message;
    const words = typeof said === 'string' && said ? `: ${this.redact(said).slice(0, 200)}` : '';
    const reason = `the service answered HTTP ${status}${words}`;
    if (status === 429 || status >= 500 || status === 408) {
      return { kind: 'retry', reason, retryAfterMs: retryAfterMs(retryAfter) };
    }
    return { kind: 'refused', reason };
  }

  /** The key never leaves in a reason, even where a service echoes it. */
  private redact(text: string): string {
    const key = this.options.authorization?.replace(/^Bearer /, '');
    return key ? text.split(key).join('[key]') : text;
  }
}

/** Retry-After as seconds or an HTTP date, in ms (undefined: none or unreadable). */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(value) - now;
  return Number.isFinite(ms) ? Math.min(MAX_RETRY_AFTER_MS, Math.max(0, ms)) : undefined;
}
