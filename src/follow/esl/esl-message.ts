import { urlDecoded } from '../../pbx/adapters/freeswitch-cdr';

/** One event-socket message: its head (`Key: Value` lines) and the body its `Content-Length` announced. */
export interface EslMessage {
  headers: Record<string, string>;
  body: string;
}

/** An event as `event json` delivers it: every header a string, multi-valued ones (ARRAY::) an array. */
export type EslEvent = Record<string, string | string[] | undefined>;

/** The longest message head: an event socket head is two or three short lines. */
export const MAX_HEAD_BYTES = 64 * 1024;
/**
 * The longest body: an event with every channel variable is a few KiB; `show channels as json` with
 * thousands of channels a few MiB.
 */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;

/**
 * FreeSWITCH event socket framing (mod_event_socket): a head of `Key: Value` lines ended by an empty line
 * (LF; CRLF tolerated), then, when the head has `Content-Length: N`, exactly N bytes of body. Bytes are
 * counted as bytes (a body may hold UTF-8). Chunks are kept as they arrive and joined only when a message is
 * complete, so a large body costs one copy. A head past MAX_HEAD_BYTES or a body announced past
 * MAX_BODY_BYTES throws: the caller drops the connection (bounded memory whatever the peer sends).
 */
export class EslFramer {
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** The head of the message whose body is still arriving. */
  private pending?: { headers: Record<string, string>; length: number };

  constructor(private readonly onMessage: (message: EslMessage) => void) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    for (;;) {
      if (this.pending) {
        if (this.buffered < this.pending.length) return;
        const all = this.take();
        const { headers, length } = this.pending;
        this.pending = undefined;
        this.keep(all.subarray(length));
        this.onMessage({ headers, body: all.subarray(0, length).toString('utf8') });
        continue;
      }
      const all = this.take();
      const end = headEnd(all);
      if (!end) {
        this.keep(all);
        if (this.buffered > MAX_HEAD_BYTES) {
          throw new Error(`event socket message head longer than ${MAX_HEAD_BYTES} bytes`);
        }
        return;
      }
      if (end.at > MAX_HEAD_BYTES) {
        throw new Error(`event socket message head longer than ${MAX_HEAD_BYTES} bytes`);
      }
      const headers = parseHead(all.subarray(0, end.at).toString('utf8'));
      this.keep(all.subarray(end.at + end.length));
      const length = Number(headers['Content-Length'] ?? 0);
      if (!Number.isInteger(length) || length < 0) {
        throw new Error(`event socket Content-Length ${headers['Content-Length']} is not a byte count`);
      }
      if (length > MAX_BODY_BYTES) {
        throw new Error(`event socket body of ${length} bytes announced (at most ${MAX_BODY_BYTES})`);
      }
      if (length > 0) {
        this.pending = { headers, length };
        continue;
      }
      // Blank lines between messages carry nothing.
      if (Object.keys(headers).length > 0) this.onMessage({ headers, body: '' });
      if (this.buffered === 0) return;
    }
  }

  private take(): Buffer {
    const all = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.buffered);
    this.chunks = [];
    this.buffered = 0;
    return all;
  }

  private keep(rest: Buffer): void {
    if (rest.length === 0) return;
    this.chunks = [rest];
    this.buffered = rest.length;
  }
}

/** Where the head ends: the first empty line (`\n\n`, or `\r\n\r\n`). */
function headEnd(buffer: Buffer): { at: number; length: number } | undefined {
  const lf = buffer.indexOf('\n\n');
  const crlf = buffer.indexOf('\r\n\r\n');
  if (crlf >= 0 && (lf < 0 || crlf < lf)) return { at: crlf, length: 4 };
  if (lf >= 0) return { at: lf, length: 2 };
  return undefined;
}

function parseHead(head: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of head.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return headers;
}

/** A `text/event-json` body as an event; undefined when it is not a JSON object. */
export function parseJsonEvent(body: string): EslEvent | undefined {
  try {
    const value: unknown = JSON.parse(body);
    if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
    const event: EslEvent = {};
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      if (typeof item === 'string') event[key] = item;
      else if (typeof item === 'number' || typeof item === 'boolean') event[key] = String(item);
      else if (Array.isArray(item)) event[key] = item.map(String);
    }
    return event;
  } catch {
    return undefined;
  }
}

/** One header's value (the last one of a multi-valued header). */
export function header(event: EslEvent, name: string): string | undefined {
  const value = event[name];
  if (Array.isArray(value)) return value[value.length - 1];
  return value === '' ? undefined : value;
}

/**
 * A `text/event-plain` body as an event: `Header: value` lines with URL-encoded values (mod_event_socket
 * encodes each), `ARRAY::a|:b` multi-values as arrays, and a body of its own (after its own Content-Length
 * and an empty line) as `_body`, as `event json` names it. A header is its whole name: a channel variable
 * that copies a header (`variable_Event-Name: REQUEST_PARAMS`) stays a variable.
 */
export function parsePlainEvent(body: string): EslEvent {
  const event: EslEvent = {};
  const end = body.search(/\r?\n\r?\n/);
  const head = end >= 0 ? body.slice(0, end) : body;
  for (const line of head.split(/\r?\n/)) {
    const colon = line.indexOf(': ');
    if (colon <= 0) continue;
    const name = line.slice(0, colon);
    const value = urlDecoded(line.slice(colon + 2));
    event[name] = value.startsWith('ARRAY::') ? value.slice('ARRAY::'.length).split('|:') : value;
  }
  const length = Number(event['Content-Length']);
  if (end >= 0 && length > 0) {
    const rest = Buffer.from(body.slice(end).replace(/^\r?\n\r?\n/, ''));
    event._body = rest.subarray(0, length).toString('utf8');
  }
  return event;
}
