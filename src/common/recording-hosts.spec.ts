import { RecordingHosts } from './recording-hosts';

describe('RecordingHosts (RECORDING_FETCH_HOSTS)', () => {
  const hosts = new RecordingHosts(['pbx.local', '10.0.0.5:8080', '*.pbx.example.com', 'PBX2.Example.org']);

  it('allows a named host on any port, over http and https', () => {
    expect(hosts.allows('http://pbx.local/rec/1.wav')).toBe(true);
    expect(hosts.allows('https://pbx.local:8443/rec/1.wav')).toBe(true);
    expect(hosts.allows('https://pbx2.example.org/a.mp3')).toBe(true);
  });

  it('allows host:port on that port only (the scheme default counts)', () => {
    expect(hosts.allows('http://10.0.0.5:8080/r.wav')).toBe(true);
    expect(hosts.allows('http://10.0.0.5/r.wav')).toBe(false);
    expect(hosts.allows('http://10.0.0.5:8081/r.wav')).toBe(false);
  });

  it('allows subdomains of a *.suffix, not the suffix itself nor look-alikes', () => {
    expect(hosts.allows('https://a.pbx.example.com/r.wav')).toBe(true);
    expect(hosts.allows('https://b.a.pbx.example.com/r.wav')).toBe(true);
    expect(hosts.allows('https://pbx.example.com/r.wav')).toBe(false);
    expect(hosts.allows('https://evilpbx.example.com/r.wav')).toBe(false);
    expect(hosts.allows('https://a.pbx.example.com.evil.net/r.wav')).toBe(false);
  });

  it('refuses other hosts, other schemes, credentials in the URL and garbage', () => {
    expect(hosts.allows('http://pbx.local.evil.net/r.wav')).toBe(false);
    expect(hosts.allows('ftp://pbx.local/r.wav')).toBe(false);
    expect(hosts.allows('file:///etc/passwd')).toBe(false);
    expect(hosts.allows('http://user:pw@pbx.local/r.wav')).toBe(false);
    expect(hosts.allows('not a url')).toBe(false);
  });

  it('allows nothing when unset', () => {
    const none = new RecordingHosts([]);
    expect(none.empty).toBe(true);
    expect(none.allows('http://pbx.local/r.wav')).toBe(false);
  });
});
