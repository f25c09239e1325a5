import { IncomingMessage, ServerResponse } from 'node:http';
import { extname } from 'node:path';
import { RecognisedSegment } from './pocketsphinx';
import { ActiveTranscribeFault } from './transcribe-faults';

/**
 * OpenAI's audio transcription interface as the test server speaks it: the form it takes, the answers
 * (`json`, `text`, `verbose_json` with segments and optionally words) and its error shape.
 */

const FORMATS = ['flac', 'm4a', 'mp3', 'mp4', 'mpeg', 'mpga', 'oga', 'ogg', 'wav', 'webm'];

export interface FailureDetails {
  /** OpenAI's error type, default `invalid_request_error`. */
  type?: string;
  /** The form field at fault. */
  param?: string;
  code?: string;
  headers?: Record<string, string>;
}

/** An answer in OpenAI's error shape: `{"error": {"message", "type", "param", "code"}}`. */
export class HttpFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details: FailureDetails = {},
  ) {
    super(message);
  }
}

export interface ValidRequest {
  file: File;
  model: string;
  format: 'json' | 'text' | 'verbose_json';
  granularities: string[];
  language?: string;
}

export function validate(form: FormData): ValidRequest {
  const file = form.get('file');
  if (file === null || typeof file === 'string') {
    throw new HttpFailure(400, "Missing required parameter: 'file'.", { param: 'file' });
  }
  const model = form.get('model');
  if (typeof model !== 'string' || model.trim() === '') {
    throw new HttpFailure(400, 'you must provide a model parameter', { param: 'model' });
  }
  const format = (form.get('response_format') as string | null) ?? 'json';
  if (!['json', 'text', 'verbose_json'].includes(format)) {
    throw new HttpFailure(
      400,
      `response_format '${format}' is not supported by this test server (json, text, verbose_json)`,
      { param: 'response_format' },
    );
  }
  const granularities = form.getAll('timestamp_granularities[]').map(String);
  if (granularities.some((one) => one !== 'segment' && one !== 'word')) {
    throw new HttpFailure(400, "timestamp_granularities[] must be 'segment' or 'word'", {
      param: 'timestamp_granularities',
    });
  }
  if (granularities.length > 0 && format !== 'verbose_json') {
    throw new HttpFailure(
      400,
      'timestamp_granularities is only supported with response_format=verbose_json',
      { param: 'timestamp_granularities' },
    );
  }
  const language = form.get('language');
  if (language !== null && (typeof language !== 'string' || !/^[a-z]{2}$/.test(language))) {
    throw new HttpFailure(400, 'language must be an ISO-639-1 code, e.g. en', { param: 'language' });
  }
  const extension = extname(file.name).slice(1).toLowerCase();
  if (!FORMATS.includes(extension)) {
    throw new HttpFailure(400, `Invalid file format. Supported formats: ${JSON.stringify(FORMATS)}`, {
      param: 'file',
    });
  }
  return {
    file,
    model,
    format: format as ValidRequest['format'],
    granularities,
    language: language ?? undefined,
  };
}

export function answer(
  res: ServerResponse,
  request: ValidRequest,
  segments: RecognisedSegment[],
  duration: number,
): void {
  const text = segments.map((segment) => segment.text).join(' ');
  if (request.format === 'text') {
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
    return void res.end(text);
  }
  if (request.format === 'json') return sendJson(res, 200, { text });
  const words = request.granularities.includes('word');
  const body: Record<string, unknown> = {
    task: 'transcribe',
    language: LANGUAGES[request.language ?? 'en'] ?? request.language,
    duration,
    text,
    segments: segments.map((segment, id) => ({
      id,
      seek: 0,
      start: segment.start,
      end: segment.end,
      // Whisper's segments begin with a space.
      text: ` ${segment.text}`,
      tokens: [],
      temperature: 0,
      avg_logprob: -0.2,
      compression_ratio: 1,
      no_speech_prob: 0.01,
    })),
    usage: { type: 'duration', seconds: Math.ceil(duration) },
  };
  if (words) body.words = segments.flatMap((segment) => segment.words);
  sendJson(res, 200, body);
}

const LANGUAGES: Record<string, string> = {
  en: 'english',
  de: 'german',
  fr: 'french',
  es: 'spanish',
  ru: 'russian',
};

export function statusFailure(fault: Extract<ActiveTranscribeFault, { kind: 'status' }>): HttpFailure {
  const retryAfter = fault.retryAfterSec ?? (fault.status === 429 ? 1 : undefined);
  const headers: Record<string, string> =
    retryAfter === undefined ? {} : { 'Retry-After': String(retryAfter) };
  if (fault.status === 429) {
    return new HttpFailure(429, 'Rate limit reached for requests. Please try again later.', {
      type: 'requests',
      code: 'rate_limit_exceeded',
      headers,
    });
  }
  if (fault.status === 503) {
    return new HttpFailure(503, 'The server is overloaded or not ready yet.', {
      type: 'server_error',
      headers,
    });
  }
  const type = fault.status >= 500 ? 'server_error' : 'invalid_request_error';
  return new HttpFailure(fault.status, `Injected error ${fault.status}`, { type, headers });
}

/** The uploaded file's extension for sox: its name's, else one from its type or first bytes. */
export function audioExtension(file: File): string {
  const named = extname(file.name).toLowerCase();
  if (named === '.wav' || named === '.mp3') return named;
  return file.type.includes('mpeg') || file.type.includes('mp3') ? '.mp3' : '.wav';
}

export async function parseForm(req: IncomingMessage, body: Buffer): Promise<FormData> {
  const type = req.headers['content-type'] ?? '';
  if (!type.toLowerCase().startsWith('multipart/form-data')) {
    throw new HttpFailure(400, 'Send multipart/form-data with the file in the field "file".');
  }
  try {
    return await new Response(body as unknown as BodyInit, { headers: { 'content-type': type } }).formData();
  } catch {
    throw new HttpFailure(400, 'The multipart/form-data body could not be parsed.');
  }
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.writableEnded || res.destroyed) return;
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(payload)),
    ...headers,
  });
  res.end(payload);
}
