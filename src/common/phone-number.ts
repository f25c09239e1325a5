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
