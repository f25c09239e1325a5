import { ConfigError, loadConfig } from './app-config';
import { recordingSettingsOf } from './settings';

describe('RECORDING_* settings', () => {
  it('default to no downloads, 32 MB, 900 s, 8 MB per request, 1000 MB per portal, kept 72 h', () => {
    expect(recordingSettingsOf(loadConfig({}))).toEqual({
      fetchHosts: [],
      fetchAuthorization: undefined,
      maxBytes: 32_000_000,
      waitMs: 900_000,
      requestMaxBytes: 8_000_000,
      quotaBytes: 1_000_000_000,
      keepMs: 72 * 3_600_000,
    });
    expect(recordingSettingsOf(loadConfig({ RECORDING_QUOTA_MB: '0' })).quotaBytes).toBeUndefined();
  });

  it('refuse a RECORDING_MAX_MB the portal could never take (over 32 MB)', () => {
    expect(() => loadConfig({ RECORDING_MAX_MB: '100' })).toThrow(/RECORDING_MAX_MB must be at most 32/);
  });

  it('turn RECORDING_FETCH_AUTH into the Authorization header', () => {
    const basic = recordingSettingsOf(loadConfig({ RECORDING_FETCH_AUTH: 'basic:rec:pa:ss' }));
    expect(basic.fetchAuthorization).toBe(`Basic ${Buffer.from('rec:pa:ss').toString('base64')}`);
    const bearer = recordingSettingsOf(loadConfig({ RECORDING_FETCH_AUTH: 'bearer:t0k3n' }));
    expect(bearer.fetchAuthorization).toBe('Bearer t0k3n');
  });

  it('take hosts, host:port and *.suffix; name the variable of a bad value without showing a secret', () => {
    const hosts = 'pbx.local, 10.0.0.5:8080,*.pbx.example.com';
    expect(recordingSettingsOf(loadConfig({ RECORDING_FETCH_HOSTS: hosts })).fetchHosts).toEqual([
      'pbx.local',
      '10.0.0.5:8080',
      '*.pbx.example.com',
    ]);
    expect(() => loadConfig({ RECORDING_FETCH_HOSTS: 'http://pbx.local/rec' })).toThrow(
      /RECORDING_FETCH_HOSTS/,
    );
    let error: unknown;
    try {
      loadConfig({ RECORDING_FETCH_AUTH: 'digest:s3cr3t-value' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/RECORDING_FETCH_AUTH/);
    expect((error as Error).message).not.toContain('s3cr3t-value');
    expect(() => loadConfig({ RECORDING_REQUEST_MAX_MB: '40' })).toThrow(/RECORDING_REQUEST_MAX_MB/);
  });
});
