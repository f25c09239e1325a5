import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

const DIGITS = /^\d+$/;

/** How to tell an employee's internal number from an outside one. */
export interface InternalNumbers {
  /** The employee directory knows an active employee with this internal number. */
  isEmployee(number: string): boolean;
  /** PBX_INTERNAL_MAX_DIGITS: a number the directory does not know is internal up to this many digits. */
  maxDigits: number;
}

/** Why `number` counts as an internal one, or undefined when it is an outside number (or none). */
export function internalBecause(number: string | undefined, numbers: InternalNumbers): string | undefined {
  if (number === undefined) return undefined;
  if (numbers.isEmployee(number)) return "an employee's internal number";
  const short =
    DIGITS.test(number) &&
    number.length <= numbers.maxDigits &&
    !number.startsWith('00') &&
    !isE164WithoutPlus(number);
  return short ? `a short number (at most ${numbers.maxDigits} digits)` : undefined;
}

/**
 * Trunks often write international numbers as E.164 digits without the `+` (`4930123456`): with a large
 * PBX_INTERNAL_MAX_DIGITS those must still count as outside.
 */
function isE164WithoutPlus(digits: string): boolean {
  return parsePhoneNumberFromString(`+${digits}`)?.isValid() ?? false;
}
