import { formatPortalDate, unixSeconds } from './date-format';

/** The `time` block every answer carries; seconds as floats, like the portal's PHP microtime. */
export interface PortalTime {
  start: number;
  finish: number;
  duration: number;
  processing: number;
  date_start: string;
  date_finish: string;
  operating_reset_at: number;
  operating: number;
}

/** How far ahead the portal's 10-minute operating-time window resets. */
const OPERATING_WINDOW_MS = 10 * 60 * 1000;

export function portalTime(
  startMs: number,
  finishMs: number,
  operatingResetAtMs?: number,
  operatingSec = 0,
): PortalTime {
  const seconds = (ms: number) => Math.round(ms * 10) / 10000;
  return {
    start: seconds(startMs),
    finish: seconds(finishMs),
    duration: seconds(finishMs - startMs),
    processing: seconds(finishMs - startMs),
    date_start: formatPortalDate(startMs),
    date_finish: formatPortalDate(finishMs),
    operating_reset_at: unixSeconds(operatingResetAtMs ?? startMs + OPERATING_WINDOW_MS),
    operating: operatingSec,
  };
}

/**
 * The portal is PHP: a map whose keys are exactly 0..n-1 in order is encoded as a JSON array, and an empty
 * map as `[]`. Batch answers show both quirks, so the sandbox reproduces them.
 */
export function phpMap(entries: Map<string, unknown>): unknown {
  const keys = [...entries.keys()];
  if (keys.every((key, index) => key === String(index))) return [...entries.values()];
  return Object.fromEntries(entries);
}
