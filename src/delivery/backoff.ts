/** Exponential backoff with "equal jitter": half fixed, half random, so retries of many calls spread out. */
export function backoffMs(
  consecutiveFailures: number,
  maxMs: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(maxMs, 1000 * 2 ** Math.min(consecutiveFailures, 20));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
