import { request as httpRequest } from 'node:http';
import { stringify } from 'qs';

/** What a form post was answered. */
export interface FormAnswer {
  status: number;
  retryAfter?: string;
  location?: string;
  text: string;
}

/**
 * A form POST from a chosen loopback address (127.0.0.0/8 all reach this machine): one source address each,
 * as the bridge's per-address limits see them (the vendor's install servers, an office, a forger).
 */
export function postFrom(source: string, url: string, form: Record<string, unknown>): Promise<FormAnswer> {
  const body = stringify(form);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      {
        method: 'POST',
        localAddress: source,
        agent: false,
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          'Content-Length': Buffer.byteLength(body),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            retryAfter: response.headers['retry-after'],
            location: response.headers.location,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}
