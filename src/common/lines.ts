import { LINE_RULE_TEXT, normaliseLine } from './line-number';

/**
 * A line's rules (docs/API.md "Lines", `LINES`): what the bridge does with the calls of one of the company's numbers.
 * Checked once (`checkLineRules`): at start-up for the environment, at save for a portal's own.
 */
export interface LineRule {
  /** The line as written (a phone number, or a name such as `trunk-2`); matched in its normalised form. */
  number: string;
  /** Up to 50 characters: the line's name on the portal (`telephony.externalLine.add` NAME). */
  name?: string;
  /** false: registered with CRM_CREATE=0 (an unknown number makes no lead; known clients are still bound). */
  crmCreate?: boolean;
  /** A lead source id (`crm.status.list` ENTITY_ID=SOURCE), sent as CRM_SOURCE. */
  crmSource?: string;
  /** The employee of this line's calls nobody took, before B24_DEFAULT_USER_ID. */
  defaultUserId?: number;
  /** false: the line's calls are stored and acknowledged but never sent to the portal (state `ignored`). */
  report?: boolean;
  /** Overrides MISSED_CALL_TASK for the line's calls. */
  missedCallTask?: boolean;
}

/** The fields a rule may have, in the order a problem names them. */
const RULE_FIELDS = [
  'number',
  'name',
  'crmCreate',
  'crmSource',
  'defaultUserId',
  'report',
  'missedCallTask',
] as const;

/** At most this many rules: the page lists them, and every call's line is matched against them. */
export const MAX_LINE_RULES = 200;

/**
 * Rules as the environment (`LINES`, JSON) or a portal's settings give them: the rules, or every problem,
 * each naming the rule (its index and number) and the field, e.g. `LINES[1] (+4930…): crmCreate must be
 * true or false`. `what` is the setting's name as the message starts (`LINES`, `lines`).
 */
export function checkLineRules(value: unknown, what: string): { rules: LineRule[] } | { problems: string[] } {
  if (!Array.isArray(value)) {
    return { problems: [`${what} must be a JSON array of line rules: [{"number": "+4930…", …}]`] };
  }
  if (value.length > MAX_LINE_RULES) {
    return { problems: [`${what} takes at most ${MAX_LINE_RULES} lines`] };
  }
  const problems: string[] = [];
  const rules: LineRule[] = [];
  const seen = new Map<string, number>();
  value.forEach((item: unknown, index) => {
    const at = `${what}[${index}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      problems.push(`${at}: each line must be an object with a number`);
      return;
    }
    const rule = item as Record<string, unknown>;
    const named = typeof rule.number === 'string' && rule.number.length <= 60 ? `${at} (${rule.number})` : at;
    const problem = (field: string, text: string) => problems.push(`${named}: ${field} ${text}`);
    for (const key of Object.keys(rule)) {
      if (!(RULE_FIELDS as readonly string[]).includes(key)) {
        problem(key.slice(0, 40), `is not a line rule field (${RULE_FIELDS.join(', ')})`);
      }
    }
    const number = typeof rule.number === 'string' ? normaliseLine(rule.number) : undefined;
    if (number === undefined) problem('number', `must be ${LINE_RULE_TEXT}`);
    else if (seen.has(number)) problem('number', `is listed twice (also ${what}[${seen.get(number)}])`);
    else seen.set(number, index);
    if (rule.name !== undefined && !(typeof rule.name === 'string' && /^.{1,50}$/su.test(rule.name))) {
      problem('name', 'must be text of 1-50 characters');
    }
    for (const flag of ['crmCreate', 'report', 'missedCallTask'] as const) {
      if (rule[flag] !== undefined && typeof rule[flag] !== 'boolean') problem(flag, 'must be true or false');
    }
    if (
      rule.crmSource !== undefined &&
      !(typeof rule.crmSource === 'string' && /^[\w.:-]{1,50}$/.test(rule.crmSource))
    ) {
      problem(
        'crmSource',
        'must be a lead source id (crm.status.list ENTITY_ID=SOURCE), 1-50 letters, digits, ".", ":", "_", "-"',
      );
    }
    if (
      rule.defaultUserId !== undefined &&
      !(Number.isInteger(rule.defaultUserId) && (rule.defaultUserId as number) >= 1)
    ) {
      problem('defaultUserId', 'must be a portal user id (a whole number of at least 1)');
    }
    rules.push(
      Object.fromEntries(
        RULE_FIELDS.filter((field) => rule[field] !== undefined).map((field) => [field, rule[field]]),
      ) as unknown as LineRule,
    );
  });
  return problems.length ? { problems } : { rules };
}

/** A portal's lines as a call's rules are looked up: the rules by normalised number, and the default line. */
export interface LineBook {
  /** B24_LINE_NUMBER (or the portal's own): the line of a call whose PBX named none. */
  readonly defaultLine?: string;
  readonly rules: readonly LineRule[];
  /** The rules by their normalised number (the portal's DEFAULT_COUNTRY applied, as to the calls' lines). */
  readonly byLine: ReadonlyMap<string, LineRule>;
}

/** The book of `rules`, each number normalised with `defaultCountry` as the calls' lines are. */
export function lineBook(
  rules: readonly LineRule[],
  defaultLine?: string,
  defaultCountry?: string,
): LineBook {
  const byLine = new Map<string, LineRule>();
  for (const rule of rules) {
    const line = normaliseLine(rule.number, defaultCountry);
    if (line !== undefined && !byLine.has(line)) byLine.set(line, rule);
  }
  const line =
    defaultLine === undefined ? undefined : (normaliseLine(defaultLine, defaultCountry) ?? defaultLine);
  return Object.freeze({ defaultLine: line, rules: Object.freeze([...rules]), byLine });
}

/** The rule of a call's (normalised) line; undefined: a line not listed, which follows the defaults. */
export function ruleOf(book: LineBook | undefined, line: string | undefined): LineRule | undefined {
  return line === undefined ? undefined : book?.byLine.get(line);
}
