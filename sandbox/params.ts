/** Request parameters after query, JSON or form decoding: nested objects, arrays and strings. */
export type Params = Record<string, unknown>;

/** Parameter names are case-insensitive on the portal (`fields`/`FIELDS`, `filter`/`FILTER`, `id`/`ID`). */
export function param(params: Params, name: string): unknown {
  if (name in params) return params[name];
  const wanted = name.toLowerCase();
  const key = Object.keys(params).find((candidate) => candidate.toLowerCase() === wanted);
  return key === undefined ? undefined : params[key];
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function stringParam(params: Params, name: string): string | undefined {
  const value = param(params, name);
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

/** An integer parameter; `undefined` when absent or empty, NaN when present but not an integer. */
export function intParam(params: Params, name: string): number | undefined {
  const value = stringParam(params, name);
  if (value === undefined || value.trim() === '') return undefined;
  return /^-?\d+$/.test(value.trim()) ? Number(value.trim()) : NaN;
}

export function objectParam(params: Params, name: string): Record<string, unknown> {
  const value = param(params, name);
  return isPlainObject(value) ? value : {};
}

/** A list given as JSON array, `NAME[]=a&NAME[]=b`, `NAME[0]=a`, or a single value. */
export function listParam(params: Params, name: string): unknown[] {
  return asList(param(params, name));
}

export function asList(value: unknown): unknown[] {
  if (value === undefined || value === null || value === '') return [];
  if (Array.isArray(value)) return value;
  if (isPlainObject(value)) return Object.values(value);
  return [value];
}

/** `1`, `Y`, `true` as the portal's flags are written by different clients. */
export function isTruthyFlag(value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0;
  return typeof value === 'string' && ['1', 'y', 'true'].includes(value.trim().toLowerCase());
}

/**
 * Fields that hold long text or file bodies (a transcript's MESSAGE is a phrase) and so are not bound by the
 * 255-character string limit.
 */
const LONG_TEXT_FIELDS = new Set(['FILE_CONTENT', 'DESCRIPTION', 'COMMENTS', 'MESSAGE']);
export const MAX_STRING_LENGTH = 255;

/** The first parameter path (`fields[TITLE]`) holding a string over 255 characters, or null. */
export function findOverlongString(value: unknown, path = ''): string | null {
  if (typeof value === 'string') return value.length > MAX_STRING_LENGTH ? path : null;
  if (!Array.isArray(value) && !isPlainObject(value)) return null;
  for (const [key, child] of Object.entries(value)) {
    if (LONG_TEXT_FIELDS.has(key.toUpperCase()) || (path === '' && key.toLowerCase() === 'auth')) continue;
    const found = findOverlongString(child, path === '' ? key : `${path}[${key}]`);
    if (found !== null) return found;
  }
  return null;
}
