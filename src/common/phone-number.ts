import { CountryCode, parsePhoneNumberFromString } from 'libphonenumber-js/max';

/**
 * One E.164 form for every way a number is written (`+49 151 1234-5678`, `0151 12345678`,
 * `0049151…`), used on intake and on lookups alike so both sides meet.
 */
export function toE164(input: string, defaultCountry?: string): string | undefined {
  const parsed = parsePhoneNumberFromString(input.trim(), {
    defaultCountry: defaultCountry as CountryCode | undefined,
    extract: false,
  });
  if (!parsed || !parsed.isPossible()) return undefined;
  return parsed.number;
}

/**
 * A withheld caller (SPEC §9): posted as `"phoneNumber": "anonymous"`, and what followed PBXs' withheld or
 * non-numeric caller IDs become. Kept as this word: registered with it, looked up nowhere, bound to nobody.
 */
export const WITHHELD_NUMBER = 'anonymous';

/** Whether a call's outside number is withheld. */
export function isWithheld(phone: string | undefined): boolean {
  return phone === WITHHELD_NUMBER;
}

/** A PBX's way of saying withheld (`anonymous`, any case), else undefined. */
export function withheldIn(input: string): string | undefined {
  return input.trim().toLowerCase() === WITHHELD_NUMBER ? WITHHELD_NUMBER : undefined;
}

/**
 * What PBXs write for a caller who withheld the number (CLIR) or whose network did not pass it on, and
 * numbers masked by the dialplan (`+31260xxxxxx`): none of them names a client.
 */
const WITHHELD_WORDS = /^(anonymous|unknown|<unknown>|unavailable|private|restricted|withheld|blocked|0*)$/i;

/** Whether a PBX's caller number is withheld, empty or masked (SPEC §9). */
export function isWithheldCaller(input: string | undefined): boolean {
  const value = input?.trim() ?? '';
  return WITHHELD_WORDS.test(value) || /^\+?\d*[xX*]+$/.test(value);
}
