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
