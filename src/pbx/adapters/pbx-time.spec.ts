import { fromLocalTime, secondsAfter, timeZoneOf } from './pbx-time';

describe('PBX local times', () => {
  it('takes ?tz= over the configured zone, and names tz in a 400 when the zone is unknown', () => {
    expect(timeZoneOf({}, 'UTC')).toBe('UTC');
    expect(timeZoneOf({ tz: 'America/New_York' }, 'UTC')).toBe('America/New_York');
    expect(() => timeZoneOf({ tz: 'Mars/Base' }, 'UTC')).toThrow('tz must be an IANA time zone');
    expect(() => timeZoneOf({ tz: ['UTC', 'UTC'] }, 'UTC')).toThrow('tz must be an IANA time zone');
  });

  it('reads a local time with the offset of its zone on that day, and refuses days that do not exist', () => {
    expect(fromLocalTime('2026-11-22 10:00:00', 'America/New_York')).toBe('2026-11-22T10:00:00-05:00');
    expect(fromLocalTime('2026-11-22 10:00:00', 'UTC')).toBe('2026-11-22T10:00:00Z');
    expect(fromLocalTime('2026-02-30 10:00:00', 'UTC')).toBeUndefined();
  });

  it('adds seconds keeping the offset', () => {
    expect(secondsAfter('2026-11-22T23:59:30+01:00', 45)).toBe('2026-11-23T00:00:15+01:00');
  });
});
