import { DialError, Dialer, fillTemplate, networkCause, OriginateRequest } from './dialer';

export interface HttpDialOptions {
  /** URL template with `{extension}`, `{number}`, `{crmCallId}`, `{userId}`. */
  url: string;
  method: 'POST' | 'GET';
  /** The Authorization header value (a secret). */
  authorization?: string;
  timeoutMs?: number;
}

/** The most of a dial URL's answer that is read: only its status counts; a longer body is cut off. */
export const MAX_ANSWER_BYTES = 64 * 1024;

/** One HTTP request per click to a URL of the operator's (a PBX's own API, a script); any 2xx means sent. */
export class HttpDialer extends Dialer {
  readonly target: string;

  constructor(private readonly options: HttpDialOptions) {
    super();
    const url = new URL(options.url.replace(/\{\w+\}/g, 'x'));
    this.target = `http ${url.protocol}//${url.host}`;
  }

  async originate(request: OriginateRequest): Promise<void> {
    const values = {
      extension: request.extension,
      number: request.number,
      crmCallId: request.crmCallId,
      userId: String(request.userId),
    };
    const url = fillTemplate(this.options.url, values, encodeURIComponent);
    const headers: Record<string, string> = {};
    if (this.options.authorization) headers.authorization = this.options.authorization;
    let body: string | undefined;
    if (this.options.method === 'POST') {
      headers['content-type'] = 'application/json';
      body = JSON.stringify({ ...values, userId: request.userId });
    }
    let response: Response;
    try {
      response = await fetch(url, {
        method: this.options.method,
        headers,
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 5000),
      });
    } catch (error) {
      const cause = (error as { cause?: unknown }).cause ?? error;
      throw new DialError(`PBX unreachable: ${networkCause(cause)} (${this.target})`);
    }
    await drainBounded(response, MAX_ANSWER_BYTES, this.target);
    if (response.status < 200 || response.status > 299) {
      throw new DialError(`the dial URL answered ${response.status} (${this.target})`);
    }
  }
}

/**
 * Reads and discards the answer's body, at most `maxBytes`: past that the connection is dropped and the
 * dial fails with a DialError saying so, so an endless answer costs no memory.
 */
async function drainBounded(response: Response, maxBytes: number, target: string): Promise<void> {
  const reader = response.body?.getReader();
  if (!reader) return;
  let read = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      read += value.byteLength;
      if (read > maxBytes) {
        await reader.cancel().catch(() => undefined);
        throw new DialError(
          `the dial URL answered more than ${maxBytes} bytes: connection dropped (${target})`,
        );
      }
    }
  } catch (error) {
    if (error instanceof DialError) throw error;
    // The answer broke off after its status: only the status counts.
  } finally {
    reader.releaseLock();
  }
}
