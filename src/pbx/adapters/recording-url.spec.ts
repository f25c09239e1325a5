import { joinedPath, recordingUrlOf } from './recording-url';

describe('recording URLs from file names', () => {
  it('takes a full http(s) URL as it is, with or without a template', () => {
    expect(recordingUrlOf('https://pbx.example.com/r.wav', undefined)).toBe('https://pbx.example.com/r.wav');
    expect(recordingUrlOf(' HTTP://pbx.local/r.mp3 ', 'https://x/')).toBe('HTTP://pbx.local/r.mp3');
  });

  it('a file name without a template is no URL; an empty one is none', () => {
    expect(recordingUrlOf('r.wav', undefined)).toBeUndefined();
    expect(recordingUrlOf('  ', 'https://x/')).toBeUndefined();
    expect(recordingUrlOf(undefined, 'https://x/')).toBeUndefined();
  });

  it('appends the file name to a base, encoded; fills {file} and {path}', () => {
    expect(recordingUrlOf('/var/spool/a b.wav', 'https://pbx.local/rec')).toBe(
      'https://pbx.local/rec/a%20b.wav',
    );
    expect(recordingUrlOf('/var/spool/a b.wav', 'https://pbx.local/{path}')).toBe(
      'https://pbx.local/var/spool/a%20b.wav',
    );
    expect(recordingUrlOf('2026/11/x#1.wav', 'https://pbx.local/dl?f={file}')).toBe(
      'https://pbx.local/dl?f=x%231.wav',
    );
  });

  it('never lets a path climb out of the template', () => {
    expect(recordingUrlOf('../../etc/passwd', 'https://pbx.local/rec/{path}')).toBe(
      'https://pbx.local/rec/etc/passwd',
    );
    expect(recordingUrlOf('..', 'https://pbx.local/rec/')).toBeUndefined();
  });

  it("fills {yyyy}/{mm}/{dd} with FreePBX's date folder: from the path, a FreePBX name, or the call's date", () => {
    const template = 'https://pbx.local/monitor/{yyyy}/{mm}/{dd}/{file}';
    expect(recordingUrlOf('/var/spool/asterisk/monitor/2026/11/26/in-101-x.wav', template)).toBe(
      'https://pbx.local/monitor/2026/11/26/in-101-x.wav',
    );
    expect(recordingUrlOf('in-101-+4915112345678-20261126-235959-1764201599.16.wav', template)).toBe(
      'https://pbx.local/monitor/2026/11/26/in-101-%2B4915112345678-20261126-235959-1764201599.16.wav',
    );
    const at = Date.parse('2026-11-26T23:30:00Z');
    expect(recordingUrlOf('plain.wav', template, { at })).toBe(
      'https://pbx.local/monitor/2026/11/26/plain.wav',
    );
    expect(recordingUrlOf('plain.wav', template, { at, timeZone: 'Europe/Berlin' })).toBe(
      'https://pbx.local/monitor/2026/11/27/plain.wav',
    );
    expect(recordingUrlOf('plain.wav', template)).toBeUndefined();
    // {path} and {file} alone are as before.
    expect(recordingUrlOf('/var/spool/asterisk/monitor/2026/11/26/a.wav', 'https://p/{path}')).toBe(
      'https://p/var/spool/asterisk/monitor/2026/11/26/a.wav',
    );
  });

  it('joins a folder and a name', () => {
    expect(joinedPath('/rec/2026/', 'a.wav')).toBe('/rec/2026/a.wav');
    expect(joinedPath('/rec', '/abs/a.wav')).toBe('/abs/a.wav');
    expect(joinedPath(undefined, 'a.wav')).toBe('a.wav');
    expect(joinedPath('/rec/a.wav', undefined)).toBe('/rec/a.wav');
  });
});
