import * as qs from 'qs';

/** Test answers are read field by field; `any` keeps those reads short. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export interface HttpAnswer {
  status: number;
  body: Json;
  headers: Headers;
}

export interface RequestOptions {
  method?: string;
  /** Sent as a JSON body. */
  json?: unknown;
  /** Sent form-encoded; an object is encoded with nested brackets (`fields[TITLE]=`). */
  form?: string | Record<string, unknown>;
  headers?: Record<string, string>;
  redirect?: RequestRedirect;
}

/** One real HTTP request; the body is parsed as JSON when it is JSON. */
export async function request(url: string, options: RequestOptions = {}): Promise<HttpAnswer> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | undefined;
  if (options.json !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(options.json);
  } else if (options.form !== undefined) {
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
    body = typeof options.form === 'string' ? options.form : qs.stringify(options.form);
  }
  const method = options.method ?? (body === undefined ? 'GET' : 'POST');
  const response = await fetch(url, { method, headers, body, redirect: options.redirect ?? 'manual' });
  const text = await response.text();
  let parsed: Json = text;
  try {
    parsed = text === '' ? null : JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status: response.status, body: parsed, headers: response.headers };
}

/** A query string with nested brackets, for GET calls and batch commands. */
export function query(params: Record<string, unknown>): string {
  return qs.stringify(params);
}

/** The `time` block every portal answer carries. */
export const portalTimeShape = {
  start: expect.any(Number),
  finish: expect.any(Number),
  duration: expect.any(Number),
  processing: expect.any(Number),
  date_start: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/),
  date_finish: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/),
  operating_reset_at: expect.any(Number),
  operating: expect.any(Number),
};
