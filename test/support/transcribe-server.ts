import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { audioInfo, recognise, RecognisedSegment, writeGrammar } from './pocketsphinx';
import { CONVERSATION } from './speech-audio';
import {
  answer,
  audioExtension,
  HttpFailure,
  parseForm,
  sendJson,
  statusFailure,
  validate,
} from './openai-transcription';
import {
  ActiveTranscribeFault,
  parseTranscribeFault,
  TranscribeFaults,
  TranscribeFaultSpec,
} from './transcribe-faults';

/**
 * The transcription service for tests: OpenAI's `POST /v1/audio/transcriptions` over real HTTP on
 * 127.0.0.1, recognising speech offline with pocketsphinx (test/support/pocketsphinx.ts) against a grammar
 * of the test's sentences, and answering `verbose_json` with the times pocketsphinx reports. Its own
 * inspection and fault API lives under `/_transcribe/`, like the sandbox portal's `/_sandbox/`.
 */

export const TRANSCRIBE_PATH = '/v1/audio/transcriptions';
export const TRANSCRIBE_CONTROL_PREFIX = '/_transcribe';
/** OpenAI's upload limit. */
export const OPENAI_MAX_BYTES = 25 * 1024 * 1024;

export interface TranscribeServerOptions {
  /** The sentences the recogniser knows (default: the standard fixtures' conversation). */
  sentences?: string[];
  /** When set, requests need `Authorization: Bearer <apiKey>` (401 otherwise, as OpenAI answers). */
  apiKey?: string;
  /** Largest request body, default OpenAI's 25 MB (413 past it). */
  maxBytes?: number;
  /** Recognisers running at once (each a pocketsphinx process), default 2: the test machines have 2 cores. */
  recognisers?: number;
  port?: number;
}

/** What the server received: the form's fields and the file's name, type, size and audio, never credentials. */
export interface ReceivedRequest {
  at: number;
  status: number;
  /** Whether the Authorization header carried the configured key (true when none is configured). */
  authorized: boolean;
  fields: Record<string, string | string[]>;
  file?: {
    name: string;
    type: string;
    bytes: number;
    channels?: number;
    sampleRate?: number;
    durationSec?: number;
  };
  /** The answer's segments (verbose_json), so a test sees what each file was recognised as. */
  segments?: number;
}

export interface TranscribeStats {
  requests: number;
  byStatus: Record<string, number>;
  /** Files recognised (answered or lost). */
  transcribed: number;
  /** Seconds of audio recognised. */
  audioSeconds: number;
  /** Answers dropped by the lose-answer fault, after the work was done. */
  lost: number;
  inFlight: number;
  /** The most requests in flight at once since the last reset. */
  maxInFlight: number;
}

export class TranscribeServer {
  readonly url: string;
  /** The endpoint a bridge is configured with (TRANSCRIBE_URL). */
  readonly endpoint: string;
  readonly faults = new TranscribeFaults();
  private readonly sockets = new Set<Socket>();
  private readonly dir: string;
  private readonly grammar: string;
  private received: ReceivedRequest[] = [];
  private counters = emptyStats();
  private readonly waiting: { count: number; resolve: () => void }[] = [];
  private running = 0;
  private readonly queue: (() => void)[] = [];
  private nextWork = 1;
  /** The slow fault's waits, ended by close() so no timer outlives the server. */
  private readonly waits = new Map<NodeJS.Timeout, () => void>();

  private constructor(
    private readonly server: Server,
    private readonly options: Required<Omit<TranscribeServerOptions, 'apiKey' | 'port'>> & {
      apiKey?: string;
    },
    dir: string,
  ) {
    const { port } = server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}`;
    this.endpoint = `${this.url}${TRANSCRIBE_PATH}`;
    this.dir = dir;
    this.grammar = writeGrammar(dir, options.sentences);
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      this.dispatch(req, res).catch((error: unknown) => {
        if (error instanceof HttpFailure) return this.fail(res, error);
        console.error('transcribe server: request failed', error);
        this.fail(
          res,
          new HttpFailure(500, 'The server had an error while processing your request.', {
            type: 'server_error',
          }),
        );
      });
    });
  }

  static async start(options: TranscribeServerOptions = {}): Promise<TranscribeServer> {
    const dir = mkdtempSync(join(tmpdir(), 'transcribe-'));
    const server = createServer({ keepAliveTimeout: 5000 });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
    });
    try {
      return new TranscribeServer(
        server,
        {
          sentences: options.sentences ?? [...CONVERSATION.left, ...CONVERSATION.right],
          maxBytes: options.maxBytes ?? OPENAI_MAX_BYTES,
          recognisers: options.recognisers ?? 2,
          apiKey: options.apiKey,
        },
        dir,
      );
    } catch (error) {
      server.close();
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
  }

  /** Every request so far, oldest first. */
  requests(): ReceivedRequest[] {
    return this.received.map((entry) => structuredClone(entry));
  }

  stats(): TranscribeStats {
    return { ...this.counters, byStatus: { ...this.counters.byStatus }, inFlight: this.counters.inFlight };
  }

  /** Resolves once `count` requests have been answered, refused or lost since the last reset. */
  answered(count: number): Promise<void> {
    if (this.received.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push({ count, resolve }));
  }

  injectFault(spec: TranscribeFaultSpec): ActiveTranscribeFault {
    return this.faults.add(spec);
  }

  clearFaults(): void {
    this.faults.clear();
  }

  /** Forgets requests, counts and faults. */
  reset(): void {
    this.received = [];
    this.counters = { ...emptyStats(), inFlight: this.counters.inFlight };
    this.faults.clear();
  }

  async close(): Promise<void> {
    this.waits.forEach((resolve, timer) => {
      clearTimeout(timer);
      resolve();
    });
    this.waits.clear();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    this.sockets.forEach((socket) => socket.destroy());
    await closed;
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', this.url).pathname.replace(/\/+$/, '');
    if (path.startsWith(TRANSCRIBE_CONTROL_PREFIX)) return this.control(req, res, path);
    if (path !== TRANSCRIBE_PATH) {
      await drain(req);
      throw new HttpFailure(404, `Invalid URL (${req.method} ${path})`);
    }
    if (req.method !== 'POST') throw new HttpFailure(405, `Invalid method ${req.method}: POST the file`);
    this.counters.requests += 1;
    this.counters.inFlight += 1;
    this.counters.maxInFlight = Math.max(this.counters.maxInFlight, this.counters.inFlight);
    const entry: ReceivedRequest = {
      at: Date.now(),
      status: 0,
      authorized: this.authorized(req),
      fields: {},
    };
    res.once('close', () => {
      this.counters.inFlight -= 1;
    });
    try {
      await this.transcribe(req, res, entry);
    } catch (error) {
      entry.status = error instanceof HttpFailure ? error.status : 500;
      throw error;
    } finally {
      this.record(entry);
    }
  }

  private async transcribe(req: IncomingMessage, res: ServerResponse, entry: ReceivedRequest): Promise<void> {
    // The whole body is read first, so a client still uploading always gets the answer.
    const body = await readLimited(req, this.options.maxBytes);
    if (!entry.authorized) {
      const given = req.headers.authorization !== undefined;
      throw new HttpFailure(
        401,
        given
          ? 'Incorrect API key provided. You can find your API key at your account settings.'
          : "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
        given ? { code: 'invalid_api_key' } : {},
      );
    }
    if (body === null) {
      throw new HttpFailure(413, `Maximum content size limit (${this.options.maxBytes}) exceeded.`);
    }
    const form = await parseForm(req, body);
    const file = form.get('file');
    for (const [name, value] of form.entries()) {
      if (typeof value !== 'string') continue;
      const previous = entry.fields[name];
      entry.fields[name] =
        previous === undefined ? value : Array.isArray(previous) ? [...previous, value] : [previous, value];
    }
    if (file !== null && typeof file !== 'string') {
      entry.file = { name: file.name, type: file.type, bytes: file.size };
    }
    // Overloaded or rate limited: before any check of the request, but after noting what it carried.
    const status = this.faults.take('status');
    if (status) throw statusFailure(status);
    const request = validate(form);
    if (
      this.faults.take('refuse', (fault) => !fault.fileName || request.file.name.includes(fault.fileName))
    ) {
      throw new HttpFailure(400, 'The audio file could not be decoded or its format is not supported.');
    }
    const work = join(this.dir, String(this.nextWork++));
    try {
      const segments = await this.recogniseFile(work, request.file, entry);
      this.counters.transcribed += 1;
      this.counters.audioSeconds = round(this.counters.audioSeconds + (entry.file?.durationSec ?? 0));
      entry.segments = segments.length;
      const slow = this.faults.take('slow');
      if (slow) await this.wait(slow.ms);
      if (this.faults.take('lose-answer')) {
        this.counters.lost += 1;
        entry.status = -1;
        res.socket?.destroy();
        return;
      }
      entry.status = 200;
      const duration = entry.file?.durationSec ?? 0;
      answer(res, request, segments, duration);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }

  private async recogniseFile(
    work: string,
    file: File,
    entry: ReceivedRequest,
  ): Promise<RecognisedSegment[]> {
    mkdirSync(work, { recursive: true });
    const audio = join(work, `upload${audioExtension(file)}`);
    writeFileSync(audio, Buffer.from(await file.arrayBuffer()));
    const info = await audioInfo(audio).catch(() => {
      throw new HttpFailure(400, 'The audio file could not be decoded or its format is not supported.');
    });
    entry.file = { ...entry.file!, ...info };
    await this.slot();
    try {
      return await recognise(audio, this.grammar, work);
    } finally {
      this.release();
    }
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waits.delete(timer);
        resolve();
      }, ms);
      this.waits.set(timer, resolve);
    });
  }

  private slot(): Promise<void> {
    if (this.running < this.options.recognisers) {
      this.running += 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.queue.push(resolve));
  }

  private release(): void {
    const next = this.queue.shift();
    if (next) next();
    else this.running -= 1;
  }

  private authorized(req: IncomingMessage): boolean {
    if (this.options.apiKey === undefined) return true;
    return req.headers.authorization === `Bearer ${this.options.apiKey}`;
  }

  private record(entry: ReceivedRequest): void {
    this.received.push(entry);
    const key = entry.status === -1 ? 'lost' : String(entry.status);
    this.counters.byStatus[key] = (this.counters.byStatus[key] ?? 0) + 1;
    for (const waiter of this.waiting.filter((one) => one.count <= this.received.length)) {
      this.waiting.splice(this.waiting.indexOf(waiter), 1);
      waiter.resolve();
    }
  }

  private fail(res: ServerResponse, failure: HttpFailure): void {
    const { type = 'invalid_request_error', param = null, code = null, headers = {} } = failure.details;
    sendJson(res, failure.status, { error: { message: failure.message, type, param, code } }, headers);
  }

  private async control(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const raw = await readLimited(req, 1024 * 1024);
    let body: unknown = {};
    try {
      body = raw && raw.length > 0 ? JSON.parse(raw.toString('utf8')) : {};
    } catch {
      return sendJson(res, 400, { error: 'the body must be JSON' });
    }
    const route = `${req.method} ${path.slice(TRANSCRIBE_CONTROL_PREFIX.length) || '/'}`;
    if (route === 'GET /requests') return sendJson(res, 200, this.requests());
    if (route === 'GET /stats') return sendJson(res, 200, this.stats());
    if (route === 'GET /faults') return sendJson(res, 200, this.faults.list());
    if (route === 'DELETE /faults') {
      this.clearFaults();
      return sendJson(res, 200, { cleared: true });
    }
    if (route === 'POST /faults') {
      const spec = parseTranscribeFault(body);
      if (typeof spec === 'string') return sendJson(res, 400, { error: spec });
      return sendJson(res, 201, this.injectFault(spec));
    }
    if (route === 'POST /reset') {
      this.reset();
      return sendJson(res, 200, { reset: true });
    }
    sendJson(res, 404, { error: `no control endpoint ${req.method} ${path}`, endpoints: CONTROL_ENDPOINTS });
  }
}

const CONTROL_ENDPOINTS = [
  'GET /_transcribe/requests (fields and file of each request, never the Authorization)',
  'GET /_transcribe/stats',
  'GET|POST|DELETE /_transcribe/faults {kind: status|refuse|slow|lose-answer, times?, forMs?, …}',
  'POST /_transcribe/reset',
];

/** The body, or null past `limit` (read to its end so the client sees the answer). */
function readLimited(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
      else chunks.length = 0;
    });
    req.on('end', () => resolve(size > limit ? null : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

async function drain(req: IncomingMessage): Promise<void> {
  await readLimited(req, 0);
}

function emptyStats(): TranscribeStats {
  return { requests: 0, byStatus: {}, transcribed: 0, audioSeconds: 0, lost: 0, inFlight: 0, maxInFlight: 0 };
}

function round(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}
