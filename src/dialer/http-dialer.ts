import { Agent, IncomingMessage, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { EgressPolicy, EgressRefused } from '../common/egress';
import { httpServerOf, HttpServer, reachable, refusedFor } from './dial-destination';
import { DialError, Dialer, fillTemplate, lineValue, networkCause, OriginateRequest } from './dialer';

export interface HttpDialOptions {
  /** URL template with `{extension}`, `{number}`, `{crmCallId}`, `{userId}`, `{line}`. */
  url: string;
  method: 'POST' | 'GET';
  /** The Authorization header value (a secret). */
  authorization?: string;
  timeoutMs?: number;
  /** Who may be reached: the operator's own settings are unrestricted, a portal's are under SPEC §8's rule. */
  egress: EgressPolicy;
}

/** The most of a dial URL's answer that is read: only its status counts; a longer body is cut off. */
export const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * One HTTP request per click to a URL of the operator's (a PBX's own API, a script); any 2xx means sent.
 * Sent with node's http(s) through the egress policy's agent (every connection's name resolved and checked,
 * a literal address checked before its socket); a redirect is an answer like any other (not 2xx: not sent),
 * never followed.
 */
export class HttpDialer extends Dialer {
  readonly target: string;
  private readonly server: HttpServer;
  private readonly agent: Agent;

  constructor(private readonly options: HttpDialOptions) {
    super();
    this.server = httpServerOf(options.url, options.egress);
    this.target = `http ${this.server.label}`;
    this.agent = options.egress.agent(this.server.tls);
  }

  async originate(request: OriginateRequest): Promise<void> {
    reachable(this.server.destination);
    const values = {
      extension: request.extension,
      number: request.number,
      crmCallId: request.crmCallId,
      userId: String(request.userId),
      // The click's line (`{line}`, empty when none); in the POST body only when there is one.
      line: lineValue(request.line),
    };
    const url = new URL(fillTemplate(this.options.url, values, encodeURIComponent));
    const headers: Record<string, string> = {};
    if (this.options.authorization) headers.authorization = this.options.authorization;
    let body: string | undefined;
    if (this.options.method === 'POST') {
      headers['content-type'] = 'application/json';
      const { line, ...rest } = values;
      body = JSON.stringify({ ...rest, userId: request.userId, ...(line ? { line } : {}) });
      headers['content-length'] = String(Buffer.byteLength(body));
    }
    const status = await this.send(url, headers, body);
    if (status < 200 || status > 299) {
      throw new DialError(`the dial URL answered ${status} (${this.target})`);
    }
  }

  /** The answer's status, once at most MAX_ANSWER_BYTES of its body were read (the rest is dropped). */
  private send(url: URL, headers: Record<string, string>, body: string | undefined): Promise<number> {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const timeoutMs = this.options.timeoutMs ?? 5000;
    return new Promise<number>((resolve, reject) => {
      let settled = false;
      const done = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        outcome();
      };
      const outgoing = send(url, { method: this.options.method, headers, agent: this.agent });
      const timer = setTimeout(() => {
        outgoing.destroy();
        done(() =>
          reject(new DialError(`PBX unreachable: no answer within ${timeoutMs} ms (${this.target})`)),
        );
      }, timeoutMs);
      outgoing.once('error', (error) =>
        done(() =>
          reject(
            error instanceof EgressRefused
              ? refusedFor('DIAL_URL', error)
              : new DialError(`PBX unreachable: ${networkCause(error)} (${this.target})`),
          ),
        ),
      );
      outgoing.once('response', (response: IncomingMessage) => {
        const status = response.statusCode ?? 0;
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.byteLength;
          if (read <= MAX_ANSWER_BYTES) return;
          response.destroy();
          done(() =>
            reject(
              new DialError(
                `the dial URL answered more than ${MAX_ANSWER_BYTES} bytes: connection dropped (${this.target})`,
              ),
            ),
          );
        });
        response.once('end', () => done(() => resolve(status)));
        // The answer broke off after its status: only the status counts.
        response.once('error', () => done(() => resolve(status)));
        response.once('close', () => done(() => resolve(status)));
      });
      outgoing.end(body);
    });
  }
}
