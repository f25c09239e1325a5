import { Agent, request as httpRequest, IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { AudioKind } from '../common/audio-type';
import { EgressPolicy, EgressRefused } from '../common/egress';
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
  /**
   * What downloads may reach (SPEC §8): single mode's operator settings are unrestricted; a portal's are
   * under the tenant rule, checked at every hop (a literal address before any socket, a name at its lookup).
   */
  egress: EgressPolicy;
}

/** Not there yet: the PBX is still converting the file, or its server is not up. */
const NOT_READY_STATUS = new Set([404, 409, 425, 503]);
const NOT_READY_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'EAI_AGAIN']);
const MAX_REDIRECTS = 5;

/**
 * Downloads a recording from an allowed host: redirects followed by hand, only while they stay on
 * RECORDING_FETCH_HOSTS; never more than `maxBytes` read; wav or mp3 only, told by the first bytes.
 * Every hop goes through the egress policy's agents: a hop the rule refuses (a literal address in a refused
 * range, a name resolving there, this deployment's own name, RECORDING_FETCH_AUTH in clear) fails the
 * download for good without a connection. Reasons name the host and path, never the query (it may hold a
 * token) nor the credentials.
 */
export class RecordingFetcher {
  private readonly agents: { http: Agent; https: Agent };

  constructor(private readonly settings: FetcherSettings) {
    this.agents = { http: settings.egress.agent(false), https: settings.egress.agent(true) };
  }

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
      const refusal = this.refusal(target);
      if (refusal) {
        return { kind: 'failed', reason: `recording: ${hop === 0 ? '' : 'redirect to '}${refusal}` };
      }
      let response: IncomingMessage;
      try {
        response = await this.get(target, signal);
      } catch (error) {
        if (error instanceof EgressRefused) {
          return {
            kind: 'failed',
            reason: `recording: ${hop === 0 ? '' : 'redirect to '}${error.message} (loopback, link-local, private and shared ranges are refused unless TENANT_ALLOWED_NETWORKS allows them)`,
          };
        }
        const code = (error as NodeJS.ErrnoException).code ?? '';
        const reason = `download of ${where(target)} failed: ${code || (error as Error).message}`;
        return NOT_READY_ERRORS.has(code) ? { kind: 'not-ready', reason } : { kind: 'failed', reason };
      }
      const status = response.statusCode ?? 0;
      if (status >= 300 && status < 400 && response.headers.location) {
        response.resume();
        if (hop >= MAX_REDIRECTS) {
          return { kind: 'failed', reason: `recording: more than ${MAX_REDIRECTS} redirects` };
        }
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

  /**
   * Why the egress rule refuses this hop before any connection: a literal address in a refused range, this
   * deployment's own name, or the download's credentials in clear (http://) to anything but an address the
   * operator allowed. A name's addresses are checked by the agent's lookup.
   */
  private refusal(target: URL): string | undefined {
    const tls = target.protocol === 'https:';
    const checked = this.settings.egress.destination({
      variable: 'recordingUrl',
      host: target.hostname,
      port: target.port ? Number(target.port) : tls ? 443 : 80,
      tls,
      credentials: this.settings.authorization !== undefined,
    });
    return 'problem' in checked ? checked.problem : undefined;
  }

  private get(target: URL, signal?: AbortSignal): Promise<IncomingMessage> {
    const tls = target.protocol === 'https:';
    const send = tls ? httpsRequest : httpRequest;
    const headers: Record<string, string> = { accept: 'audio/mpeg, audio/wav, audio/*;q=0.8, */*;q=0.1' };
    if (this.settings.authorization) headers.authorization = this.settings.authorization;
    return new Promise((resolve, reject) => {
      const request = send(target, {
        method: 'GET',
        headers,
        timeout: this.settings.timeoutMs,
        signal,
        agent: tls ? this.agents.https : this.agents.http,
      });
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
