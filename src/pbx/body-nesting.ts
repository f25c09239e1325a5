const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;

/**
 * Whether JSON text nests arrays and objects more than `limit` deep, read in one pass without parsing:
 * JSON.parse and class-transformer recurse, and a body nested some thousand deep overflows the stack
 * (a 500) before any validation could refuse it. Brackets inside strings do not count. On UTF-8 bytes
 * every byte of a multi-byte character is 0x80 or above, so none is taken for a bracket or a quote.
 */
export function nestsDeeperThan(json: Buffer | string, limit: number): boolean {
  const codeAt = typeof json === 'string' ? (i: number) => json.charCodeAt(i) : (i: number) => json[i];
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < json.length; i++) {
    const code = codeAt(i);
    if (inString) {
      if (escaped) escaped = false;
      else if (code === BACKSLASH) escaped = true;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) {
      inString = true;
    } else if (code === OPEN_BRACKET || code === OPEN_BRACE) {
      if (++depth > limit) return true;
    } else if (code === CLOSE_BRACKET || code === CLOSE_BRACE) {
      depth--;
    }
  }
  return false;
}

/** Thrown from a body parser's `verify`, before the body is parsed; the middleware answers it with a 400. */
export class TooDeeplyNested extends Error {
  readonly type = 'entity.too.deep';
}

/** Thrown from `verify` for JSON in another charset than UTF-8, which the byte count above cannot read. */
export class NotUtf8 extends Error {
  readonly type = 'charset.unsupported';
}

/** A body parser's `verify` refusing, before parsing, JSON nested more than `limit` deep or not in UTF-8. */
export function verifyNesting(limit: number) {
  return (_request: unknown, _response: unknown, body: Buffer, encoding: string): void => {
    if (!/^utf-?8$/i.test(encoding)) throw new NotUtf8(`charset ${encoding}`);
    if (nestsDeeperThan(body, limit)) throw new TooDeeplyNested(`nested more than ${limit} deep`);
  };
}
