import { DialError, Dialer, fillTemplate, networkCause, OriginateRequest } from './dialer';

export interface HttpDialOptions {
  /** URL template with `{extension}`, `{number}`, `{crmCallId}`, `{userId}`. */
  url: string;
  method: 'POST' | 'GET';
  /** The Authorization header value (a secret). */
  authorization?: string;
  timeoutMs?: number;
}

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
    await response.arrayBuffer().catch(() => undefined);
    if (response.status < 200 || response.status > 299) {
      throw new DialError(`the dial URL answered ${response.status} (${this.target})`);
    }
  }
}
