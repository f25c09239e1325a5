import { request as httpRequest, IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { AudioKind, SNIFF_BYTES, sniffAudio } from '../common/audio-type';
import { RecordingHosts } from '../common/recording-hosts';

/** What one download came to (SPEC.md §5). */
export type FetchOutcome =
  | { kind: 'fetched'; content: Buffer; audio: AudioKind; name: string }
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

  async fetch(url: string): Promise<FetchOutcome> {
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
        response = await this.get(target);
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
      return this.read(response, target);
    }
  }

  private get(target: URL): Promise<IncomingMessage> {
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const headers: Record<string, string> = { accept: 'audio/mpeg, audio/wav, audio/*;q=0.8, */*;q=0.1' };
    if (this.settings.authorization) headers.authorization = this.settings.authorization;
    return new Promise((resolve, reject) => {
      const request = send(target, { method: 'GET', headers, timeout: this.settings.timeoutMs });
      request.once('response', resolve);
      request.once('timeout', () =>
        request.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })),
      );
      request.once('error', reject);
      request.end();
    });
  }

  /** Reads the body up to maxBytes, refusing what is not wav or mp3 after its first bytes. */
  private read(response: IncomingMessage, target: URL): Promise<FetchOutcome> {
    const { maxBytes } = this.settings;
    const limitMb = Math.round(maxBytes / 1_000_000);
    const declared = Number(response.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBytes) {
      response.destroy();
      return Promise.resolve({
        kind: 'failed',
        reason: `recording: ${declared} bytes is larger than RECORDING_MAX_MB (${limitMb} MB)`,
      });
    }
    const contentType = response.headers['content-type'];
    return new Promise((resolve) => {
      const chunks: Buffer[] = [];
      let total = 0;
      let kind: AudioKind | undefined;
      let settled = false;
      const finish = (outcome: FetchOutcome) => {
        if (settled) return;
        settled = true;
        if (outcome.kind !== 'fetched') response.destroy();
        resolve(outcome);
      };
      response.on('data', (chunk: Buffer) => {
        if (settled) return;
        total += chunk.length;
        if (total > maxBytes) {
          finish({
            kind: 'failed',
            reason: `recording: larger than RECORDING_MAX_MB (${limitMb} MB); download stopped`,
          });
          return;
        }
        chunks.push(chunk);
        if (kind === undefined && total >= SNIFF_BYTES) {
          kind = sniffAudio(Buffer.concat(chunks).subarray(0, SNIFF_BYTES), contentType);
          if (!kind) finish(notAudio(contentType));
        }
      });
      response.once('end', () => {
        if (settled) return;
        kind ??= sniffAudio(Buffer.concat(chunks), contentType);
        if (!kind) return finish(notAudio(contentType));
        const name = baseName(target);
        finish({ kind: 'fetched', content: Buffer.concat(chunks, total), audio: kind, name });
      });
      response.once('error', (error) =>
        finish({ kind: 'not-ready', reason: `download of ${where(target)} broke off: ${error.message}` }),
      );
      response.once('aborted', () =>
        finish({ kind: 'not-ready', reason: `download of ${where(target)} broke off` }),
      );
    });
  }
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
