import { createHash, timingSafeEqual } from 'node:crypto';

/** A secret's SHA-256: equal-length inputs for timingSafeEqual, whatever the candidate's length. */
export function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** The digests of the configured tokens that are set; none set, nothing is accepted. */
export function digestsOf(...tokens: (string | undefined)[]): Buffer[] {
  return tokens.filter((token): token is string => Boolean(token)).map(digest);
}

/** Compares digests so neither the length nor the content of a token leaks through timing. */
export function matchesAny(candidate: string, accepted: readonly Buffer[]): boolean {
  const presented = digest(candidate);
  let found = false;
  for (const token of accepted) found = timingSafeEqual(presented, token) || found;
  return found;
}

/** Whether two secrets are equal, in constant time; an absent candidate never is. */
export function sameSecret(expected: string, candidate: string | undefined): boolean {
  return candidate !== undefined && matchesAny(candidate, [digest(expected)]);
}
