import { DateTime, IANAZone } from 'luxon';
import { nativeBadRequest } from './native-record';

/** How Asterisk's CDR(start) and Yeastar's time_start write a moment: local time, no offset. */
export const LOCAL_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
const LOCAL_FORMAT = 'yyyy-MM-dd HH:mm:ss';

const iso = (moment: DateTime) => moment.toISO({ suppressMilliseconds: true }) ?? undefined;

/**
 * The zone a PBX's local times are in: `?tz=` on its URL (one bridge, PBXs in several zones), else
 * PBX_TIME_ZONE. An unknown zone is a 400 naming `tz`, never a silent guess.
 */
export function timeZoneOf(query: unknown, fallback: string): string {
  const tz = (query as Record<string, unknown> | undefined)?.tz;
  if (tz === undefined) return fallback;
  if (typeof tz === 'string' && IANAZone.isValidZone(tz)) return tz;
  const problem = 'tz must be an IANA time zone such as Europe/Berlin';
  throw nativeBadRequest(problem, [{ field: 'tz', problems: [problem] }]);
}

/** `2026-11-22 10:00:00` in `zone` as ISO 8601 with that zone's offset; undefined when no such moment. */
export function fromLocalTime(local: string, zone: string): string | undefined {
  const moment = DateTime.fromFormat(local.trim(), LOCAL_FORMAT, { zone });
  return moment.isValid ? iso(moment) : undefined;
}

/** Seconds since 1970 as ISO 8601, shown with `zone`'s offset (the instant is the same in any zone). */
export function fromEpochSeconds(seconds: number, zone: string): string | undefined {
  const moment = DateTime.fromSeconds(seconds, { zone });
  return moment.isValid ? iso(moment) : undefined;
}

/** An ISO moment plus some seconds, keeping its offset. */
export function secondsAfter(at: string, seconds: number): string {
  return iso(DateTime.fromISO(at, { setZone: true }).plus({ seconds })) ?? at;
}

/** The receipt time, for PBX events that carry none (Yeastar's call state changes). */
export function now(zone: string): string {
  return iso(DateTime.now().setZone(zone).startOf('second')) ?? new Date().toISOString();
}
