/** The portal compares phone numbers by their digits only: `+49 151 1234-5678` equals `4915112345678`. */
export function phoneDigits(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' ? String(value).replace(/\D/g, '') : '';
}

export function samePhone(a: unknown, b: unknown): boolean {
  const digits = phoneDigits(a);
  return digits.length > 0 && digits === phoneDigits(b);
}
