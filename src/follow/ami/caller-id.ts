export const ANONYMOUS = 'anonymous';

/**
 * An outside party's number as reported: `anonymous` for one withheld or that is not a number (`<unknown>`,
 * `anonymous`, `restricted`, `unavailable`, empty, masked like `+31260xxxxxx`).
 */
export function outsideNumber(value: string | undefined): string {
  return isNumber(value) ? (value as string).trim() : ANONYMOUS;
}

export function isNumber(value: string | undefined): boolean {
  return /^\+?\d[\d\s().-]*$/.test(value?.trim() ?? '');
}

/**
 * A caller id presentation (`CID-CallingPres: 33 (Presentation Prohibited, Passed Screen)`) that withholds
 * the number: Asterisk's AST_PRES_RESTRICTED (0x20) or AST_PRES_UNAVAILABLE (0x40) bits.
 */
export function withheld(presentation: string | undefined): boolean {
  const value = Number.parseInt(presentation ?? '', 10);
  return Number.isFinite(value) && (value & 0x60) !== 0;
}
