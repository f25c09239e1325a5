import { request as httpRequest, IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { AudioKind } from '../common/audio-type';
import { NotAudioError, RecordingScan, RecordingTooLargeError } from '../common/recording-stream';
import { RecordingHosts } from '../common/recording-hosts';

/** What one download came to (docs/API.md). */
export type FetchOutcome =
  | { kind: 'fetched'; content: Buffer; audio: AudioKind; name: string }
  | { kind: 'not-ready'; reason: string }
  | { kind: 'failed'; reason: string };

/**
 * A download whose answer is in: its body streams (read it through a RecordingScan), or why there is none.
 * `broke` turns an error of the body's stream into the outcome it means (the server cut it off).
 */
export type OpenedDownload =
  | {
      kind: 'open';
      body: AsyncIterable<Buffer>;
      contentType?: string;
      name: string;
      tooLarge: string;
      broke: (error: Error) => FetchOutcome;
    }
  | { kind: 'not-ready'; reason: string }
  | { kind: 'failed'; reason: string };

export interface FetcherSettings {
  hosts: RecordingHosts;
  /** The Authorization header for the allowed hosts (a secret: never in a reason or log). */
  authorization?: string;
  maxBytes: number;
  /** Per hop: no answer (or no bytes) for this long aborts the download, which is then retried. */
  timeoutMs: number;
}

/** Not there yet: the PBX is still converting the file, or its server is not up. */
const NOT_READY_STATUS = new Set([404, 409, 425, 503]);
const NOT_READY_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'EAI_AGAIN']);
const MAX_REDIRECTS = 5;

/**
 * Downloads a recording from an allowed host: redirects followed by hand, only while they stay on
 * RECORDING_FETCH_HOSTS; never more than `maxBytes` read; wav or mp3 only, told by the first bytes.
 * Reasons name the host and path, never the query (it may hold a token) nor the credentials.
 */
export class RecordingFetcher {
  constructor(private readonly settings: FetcherSettings) {}

  /** RECORDING_MAX_MB in bytes: a body is read no further. */
  get maxBytes(): number {
    return this.settings.maxBytes;
  }

  /** The whole file in memory (specs, small files): `open` and store the body as it streams instead. */
  async fetch(url: string, signal?: AbortSignal): Promise<FetchOutcome> {
    const opened = await this.open(url, signal);
    if (opened.kind !== 'open') return opened;
    const scan = new RecordingScan(this.settings.maxBytes, opened.contentType, opened.tooLarge);
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of scan.pass(opened.body)) chunks.push(chunk);
    } catch (error) {
      return outcomeOfBody(error as Error, opened);
    }
    return { kind: 'fetched', content: Buffer.concat(chunks), audio: scan.kind!, name: opened.name };
  }

  /**
   * Follows the URL to its answer (redirects only on the allowed hosts) and opens the body; `signal` aborts
   * the download wherever it is (the delivery stopped).
   */
  async open(url: string, signal?: AbortSignal): Promise<OpenedDownload> {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return { kind: 'failed', reason: 'recording: recordingUrl is not a URL' };
    }
    for (let hop = 0; ; hop += 1) {
      if (!this.settings.hosts.allows(target)) {
        return {
          kind: 'failed',
          reason: `recording: ${hop === 0 ? '' : 'redirect to '}${target.host} is not in RECORDING_FETCH_HOSTS`,
        };
      }
      let response: IncomingMessage;
      try {
        response = await this.get(target, signal);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? '';
        const reason = `download of ${where(target)} failed: ${code || (error as Error).message}`;
        return NOT_READY_ERRORS.has(code) ? { kind: 'not-ready', reason } : { kind: 'failed', reason };
      }
      const status = response.statusCode ?? 0;
      if (status >= 300 && status < 400 && response.headers.location) {
        response.resume();
        if (hop >= MAX_REDIRECTS)
          return { kind: 'failed', reason: `recording: more than ${MAX_REDIRECTS} redirects` };
        try {
          target = new URL(response.headers.location, target);
        } catch {
          return { kind: 'failed', reason: 'recording: redirect to a malformed location' };
        }
        continue;
      }
      if (status !== 200) {
        response.resume();
        const reason = `${where(target)} answered HTTP ${status}`;
        return NOT_READY_STATUS.has(status)
          ? { kind: 'not-ready', reason }
          : { kind: 'failed', reason: `recording: ${reason}` };
      }
      return this.opened(response, target);
    }
  }

  private get(target: URL, signal?: AbortSignal): Promise<IncomingMessage> {
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const headers: Record<string, string> = { accept: 'audio/mpeg, audio/wav, audio/*;q=0.8, */*;q=0.1' };
    if (this.settings.authorization) headers.authorization = this.settings.authorization;
    return new Promise((resolve, reject) => {
      const request = send(target, { method: 'GET', headers, timeout: this.settings.timeoutMs, signal });
      request.once('response', resolve);
      request.once('timeout', () =>
        request.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })),
      );
      request.once('error', reject);
      request.end();
    });
  }

  /** The body to stream, unless its declared size is already past maxBytes. */
  private opened(response: IncomingMessage, target: URL): OpenedDownload {
    const { maxBytes } = this.settings;
    const limitMb = Math.round(maxBytes / 1_000_000);
    const declared = Number(response.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBytes) {
      response.destroy();
      return {
        kind: 'failed',
        reason: `recording: ${declared} bytes is larger than RECORDING_MAX_MB (${limitMb} MB)`,
      };
    }
    const contentType = response.headers['content-type'];
    return {
      kind: 'open',
      body: response,
      contentType,
      name: baseName(target),
      tooLarge: `recording: larger than RECORDING_MAX_MB (${limitMb} MB); download stopped`,
      broke: (error) => ({
        kind: 'not-ready',
        reason: `download of ${where(target)} broke off: ${error.message}`,
      }),
    };
  }
}

/** What an error while the body streamed through a RecordingScan means for the download. */
export function outcomeOfBody(error: Error, opened: Extract<OpenedDownload, { kind: 'open' }>): FetchOutcome {
  if (error instanceof RecordingTooLargeError) return { kind: 'failed', reason: error.message };
  if (error instanceof NotAudioError) return notAudio(opened.contentType);
  return opened.broke(error);
}

function notAudio(contentType: string | undefined): FetchOutcome {
  return {
    kind: 'failed',
    reason: `recording: not wav or mp3 (Content-Type ${contentType ?? 'none'}); the portal takes wav and mp3 only`,
  };
}

/** The file name the URL ends in (the portal's FILENAME is made from it). */
function baseName(url: URL): string {
  const last = url.pathname.split('/').pop() ?? '';
  try {
    return decodeURIComponent(last) || 'recording';
  } catch {
    return last || 'recording';
  }
}

/** Host and path of a URL, without its query (it may hold a token). */
function where(url: URL): string {
  return `${url.host}${url.pathname}`;
}
