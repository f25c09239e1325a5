import { LineRule } from '../common/lines';
import { normaliseLine } from '../common/line-number';
import { CallStore } from '../store/call-store';

/** A line on the page: its rule (configured or not), today's calls on it, and whether it carried any call. */
export interface PageLine {
  /** The normalised number (as calls carry it). */
  number: string;
  rule: LineRule;
  configured: boolean;
  today: number;
}

export interface PageLines {
  lines: PageLine[];
  /** Today's calls on no line (no line from the PBX and no B24_LINE_NUMBER). */
  unlined: number;
}

/** Local midnight of the bridge's clock (UTC), as the page's "today's calls" count. */
export function todayStart(now = Date.now()): number {
  const midnight = new Date(now);
  midnight.setUTCHours(0, 0, 0, 0);
  return midnight.getTime();
}

/**
 * Every line configured (`lines`) or seen (a call the store still holds was on it), with today's calls on
 * each, busiest first, then configured ones by number. One grouped count per question, on either engine.
 */
export async function pageLinesOf(
  calls: CallStore,
  portalId: string,
  rules: LineRule[] | undefined,
  now = Date.now(),
): Promise<PageLines> {
  const [today, ever] = await Promise.all([
    calls.callsByLine(portalId, todayStart(now)),
    calls.callsByLine(portalId, 0),
  ]);
  const byNumber = new Map<string, PageLine>();
  for (const rule of rules ?? []) {
    const number = normaliseLine(rule.number) ?? rule.number;
    byNumber.set(number, { number, rule, configured: true, today: 0 });
  }
  for (const { line } of ever) {
    if (line !== undefined && !byNumber.has(line)) {
      byNumber.set(line, { number: line, rule: { number: line }, configured: false, today: 0 });
    }
  }
  let unlined = 0;
  for (const { line, calls: count } of today) {
    if (line === undefined) unlined += count;
    else if (byNumber.has(line)) byNumber.get(line)!.today = count;
  }
  const lines = [...byNumber.values()].sort((a, b) => b.today - a.today || a.number.localeCompare(b.number));
  return { lines, unlined };
}

/** The rule a line form posted (`form`: its fields as typed); a text that is no valid value stays a text. */
export function ruleOf(number: string, form: Record<string, unknown>): Record<string, unknown> {
  const text = (name: string) => (typeof form[name] === 'string' ? (form[name] as string).trim() : '');
  const yesNo = (name: string) => {
    const value = text(name);
    return value === '' ? undefined : value === 'yes' ? true : value === 'no' ? false : value;
  };
  const rule: Record<string, unknown> = { number };
  if (text('name')) rule.name = text('name');
  const crmCreate = yesNo('crmCreate');
  if (crmCreate !== undefined) rule.crmCreate = crmCreate;
  if (text('crmSource')) rule.crmSource = text('crmSource');
  const user = text('defaultUserId');
  if (user) rule.defaultUserId = /^\d{1,9}$/.test(user) ? Number(user) : user;
  const report = yesNo('report');
  if (report !== undefined) rule.report = report;
  const task = yesNo('missedCallTask');
  if (task !== undefined) rule.missedCallTask = task;
  return rule;
}

/** The lines setting with `rule` in the place of its line's (or added last), and the index it has there. */
export function linesWith(
  rules: LineRule[] | undefined,
  rule: Record<string, unknown>,
): { lines: unknown[]; index: number } {
  const number = String(rule.number);
  const key = normaliseLine(number) ?? number;
  const lines: unknown[] = [...(rules ?? [])];
  const at = (rules ?? []).findIndex((stored) => (normaliseLine(stored.number) ?? stored.number) === key);
  if (at >= 0) {
    lines[at] = rule;
    return { lines, index: at };
  }
  lines.push(rule);
  return { lines, index: lines.length - 1 };
}

/**
 * The problems of the lines setting about rule `index`, by its field (`lines[2] (+4930…): crmSource must
 * be…` goes beside crmSource); the rest under `line`.
 */
export function lineErrorsOf(problems: string[], index: number): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  for (const message of problems) {
    const named = /^lines\[(\d+)\][^:]*: (\w+) /.exec(message);
    const key = named && Number(named[1]) === index ? named[2] : 'line';
    (errors[key] ??= []).push(message);
  }
  return errors;
}
