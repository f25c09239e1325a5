/**
 * Channel-name patterns (PBX_TRUNKS, docs/API.md) matched without a regular expression built from a
 * tenant's text, in time linear in the name. Depends on nothing of the project.
 *
 * The semantics are those of the regular expressions the bridge built before (`^` + the pattern with `*` as
 * `.*`, flag `i`): `*` matches any run of characters, everything else (`?` and `.` included) is itself; a
 * pattern matches a name that starts with what it describes (`PJSIP/trunk` matches `PJSIP/trunk-0000001a`);
 * letters compare case-insensitively as that flag compares them (code unit by code unit, by upper case); and
 * `*` does not cross a line break (a pattern holds none: the match lies within the name's first line).
 *
 * How: the pattern is split at `*` into literal segments. The first must start the name; each next one is
 * found at its leftmost place after the previous one's end (leftmost is always right for `*`-only globs with
 * no end anchor). Each search is Knuth–Morris–Pratt, so it reads the name forward and never backs up: one
 * match costs at most 2·n + m comparisons for a name of n characters and a pattern of m, whatever the
 * pattern (`PJSIP/*0*0*0*0*0*0*0*0*0*0*0*0*X` included), where the old regular expression backtracked in
 * time exponential in the number of stars.
 */
export class Glob {
  /** The literal segments between stars, canonical (upper case), and each one's KMP failure table. */
  private readonly head: string;
  private readonly rest: { text: string; fail: Int32Array }[];

  constructor(readonly pattern: string) {
    const [head, ...rest] = canonical(pattern).split('*');
    this.head = head;
    this.rest = rest.filter((text) => text !== '').map((text) => ({ text, fail: failureTable(text) }));
  }

  /**
   * Whether the name starts with what the pattern describes. `meter.steps` (when given) is increased by the
   * character comparisons made: at most 2·n + m, a unit spec's way of seeing the bound without a clock.
   */
  matches(name: string, meter?: { steps: number }): boolean {
    return this.matchesCanonical(canonical(firstLine(name)), meter);
  }

  /** `matches` for a name already cut at its first line break and made canonical. */
  matchesCanonical(text: string, meter?: { steps: number }): boolean {
    let steps = 0;
    try {
      if (text.length < this.head.length) return false;
      for (let i = 0; i < this.head.length; i++) {
        steps++;
        if (text.charCodeAt(i) !== this.head.charCodeAt(i)) return false;
      }
      let position = this.head.length;
      for (const segment of this.rest) {
        const found = search(text, position, segment.text, segment.fail, (count) => (steps += count));
        if (found < 0) return false;
        position = found + segment.text.length;
      }
      return true;
    } finally {
      if (meter) meter.steps += steps;
    }
  }
}

/** Several patterns: whether a name matches any (PBX_TRUNKS: a channel matching one is a trunk). */
export class GlobSet {
  private readonly globs: Glob[];

  constructor(patterns: readonly string[]) {
    this.globs = patterns.map((pattern) => new Glob(pattern));
  }

  get size(): number {
    return this.globs.length;
  }

  matchesAny(name: string, meter?: { steps: number }): boolean {
    if (this.globs.length === 0) return false;
    const text = canonical(firstLine(name));
    return this.globs.some((glob) => glob.matchesCanonical(text, meter));
  }
}

const LINE_BREAK = /[\n\r\u2028\u2029]/;

function firstLine(name: string): string {
  const at = name.search(LINE_BREAK);
  return at < 0 ? name : name.slice(0, at);
}

/** The text as the `i` flag (without `u`) compares it: each code unit by its upper case, when that is one unit and not ASCII from non-ASCII. */
function canonical(text: string): string {
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(text)) return text.toUpperCase();
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const unit = text[i];
    const upper = unit.toUpperCase();
    out += upper.length !== 1 || (unit.charCodeAt(0) >= 128 && upper.charCodeAt(0) < 128) ? unit : upper;
  }
  return out;
}

/** KMP: for each prefix of `word`, the length of its longest proper prefix that is also its suffix. */
function failureTable(word: string): Int32Array {
  const fail = new Int32Array(word.length);
  let k = 0;
  for (let i = 1; i < word.length; i++) {
    while (k > 0 && word.charCodeAt(i) !== word.charCodeAt(k)) k = fail[k - 1];
    if (word.charCodeAt(i) === word.charCodeAt(k)) k++;
    fail[i] = k;
  }
  return fail;
}

/** The leftmost index ≥ `from` where `word` occurs in `text`, or -1; reads `text` forward only. */
function search(
  text: string,
  from: number,
  word: string,
  fail: Int32Array,
  count: (steps: number) => void,
): number {
  let k = 0;
  let steps = 0;
  for (let i = from; i < text.length; i++) {
    while (k > 0 && text.charCodeAt(i) !== word.charCodeAt(k)) {
      k = fail[k - 1];
      steps++;
    }
    steps++;
    if (text.charCodeAt(i) === word.charCodeAt(k)) k++;
    if (k === word.length) {
      count(steps);
      return i - word.length + 1;
    }
  }
  count(steps);
  return -1;
}
