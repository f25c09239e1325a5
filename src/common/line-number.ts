import { toE164 } from './phone-number';

/** A line that is not a phone number (a trunk's name, `pbx-bridge`): kept as given when it matches this. */
export const LINE_TEXT_PATTERN = /^[\w.+-]{1,50}$/;

/** What a line must be, as a 400 or a start-up message says it. */
export const LINE_RULE_TEXT = 'a phone number, or 1-50 letters, digits, dots, pluses, dashes or underscores';

/**
 * One form of a company's line (docs/API.md "Lines"), on intake and in LINES alike so both sides meet: a phone number in
 * E.164 (national numbers by `defaultCountry`, as `phoneNumber`), else the text as given when it matches
 * LINE_TEXT_PATTERN; undefined when it is neither.
 */
export function normaliseLine(input: string, defaultCountry?: string): string | undefined {
  const text = input.trim();
  if (/\d/.test(text) && /^[\d\s()+./-]+$/.test(text)) {
    const e164 = toE164(text, defaultCountry);
    if (e164) return e164;
  }
  return LINE_TEXT_PATTERN.test(text) ? text : undefined;
}
