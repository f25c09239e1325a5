import { phoneDigits } from './phone';
import { isPlainObject } from './params';

/** Rows per page of every list method. */
export const PAGE_SIZE = 50;

export interface Page<T> {
  rows: T[];
  total?: number;
  next?: number;
}

/** Reads one field of a row for filtering and ordering; arrays mean "any of these values". */
export type FieldReader<T> = (row: T, field: string) => unknown;

const FILTER_KEY = /^(>=|<=|!=|!@|=|!|>|<|%|@)?(.+)$/;

/** Filters like the portal's: `{"=ID": 1, ">ID": 10, "!STATUS_ID": "NEW", "%TITLE": "call", "@ID": [1, 2]}`. */
export function applyFilter<T>(rows: T[], filter: Record<string, unknown>, read: FieldReader<T>): T[] {
  const conditions = Object.entries(filter).map(([key, expected]) => {
    const [, op = '=', field] = FILTER_KEY.exec(key) ?? [];
    return { op, field: field.toUpperCase(), expected };
  });
  return rows.filter((row) =>
    conditions.every(({ op, field, expected }) => matches(read(row, field), op, expected, field)),
  );
}

function matches(actual: unknown, op: string, expected: unknown, field: string): boolean {
  const values = Array.isArray(actual) ? actual : [actual];
  const wanted = Array.isArray(expected)
    ? expected
    : isPlainObject(expected)
      ? Object.values(expected)
      : [expected];
  const equal = (a: unknown, b: unknown) =>
    field === 'PHONE' ? phoneDigits(a) !== '' && phoneDigits(a) === phoneDigits(b) : compare(a, b) === 0;
  switch (op) {
    case '=':
    case '@':
      return values.some((value) => wanted.some((w) => equal(value, w)));
    case '!':
    case '!=':
    case '!@':
      return !values.some((value) => wanted.some((w) => equal(value, w)));
    case '%':
      return values.some((value) =>
        wanted.some((w) =>
          String(value ?? '')
            .toLowerCase()
            .includes(String(w).toLowerCase()),
        ),
      );
    default:
      return values.some((value) => {
        if (value === null || value === undefined || value === '') return false;
        const order = compare(value, wanted[0]);
        return op === '>' ? order > 0 : op === '>=' ? order >= 0 : op === '<' ? order < 0 : order <= 0;
      });
  }
}

function comparable(value: unknown): number | string {
  if (typeof value === 'number') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  const text = String(value ?? '').trim();
  if (/^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  if (/^\d{4}-\d{2}-\d{2}/.test(text) && !Number.isNaN(Date.parse(text))) return Date.parse(text);
  return text.toLowerCase();
}

export function compare(a: unknown, b: unknown): number {
  const left = comparable(a);
  const right = comparable(b);
  if (typeof left === 'number' && typeof right === 'number') return left - right;
  return String(left).localeCompare(String(right));
}

/** `{"DATE_MODIFY": "DESC", "ID": "ASC"}`; rows keep their order where the keys tie. */
export function applyOrder<T>(rows: T[], order: Record<string, unknown>, read: FieldReader<T>): T[] {
  const keys = Object.entries(order).map(([field, direction]) => ({
    field: field.toUpperCase(),
    sign: String(direction).toUpperCase() === 'DESC' ? -1 : 1,
  }));
  if (keys.length === 0) return rows;
  return [...rows].sort((a, b) => {
    for (const { field, sign } of keys) {
      const order = compare(read(a, field), read(b, field));
      if (order !== 0) return sign * order;
    }
    return 0;
  });
}

/** 50 rows from `start`; `start=-1` answers the first page without counting (no total, no next). */
export function pageOf<T>(rows: T[], start: number | undefined): Page<T> {
  if (start === -1) return { rows: rows.slice(0, PAGE_SIZE) };
  const offset = start !== undefined && Number.isFinite(start) && start > 0 ? start : 0;
  const page = rows.slice(offset, offset + PAGE_SIZE);
  const next = offset + PAGE_SIZE < rows.length ? offset + PAGE_SIZE : undefined;
  return next === undefined ? { rows: page, total: rows.length } : { rows: page, total: rows.length, next };
}
