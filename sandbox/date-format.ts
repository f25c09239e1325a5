/** Dates the way the portal writes and reads them: ISO 8601 with an explicit UTC offset. */

const ISO_WITH_OFFSET =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

/** `2026-11-22T10:00:00+00:00`: the portal runs in UTC. */
export function formatPortalDate(ms: number): string {
  const d = new Date(ms);
  return (
    `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}` +
    `T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}+00:00`
  );
}

/** Epoch ms of an ISO 8601 date-time that carries an offset; null when it is not one. */
export function parseDateWithOffset(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const match = ISO_WITH_OFFSET.exec(value.trim());
  if (!match) return null;
  const [, , month, day, hour, minute, second] = match;
  if (Number(month) > 12 || Number(day) > 31 || Number(hour) > 23 || Number(minute) > 59) return null;
  if (second !== undefined && Number(second) > 59) return null;
  const ms = Date.parse(value.trim());
  return Number.isNaN(ms) ? null : ms;
}

export function unixSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}
