import { ConfigError, loadConfig } from './app-config';
import { followSettingsOf } from './settings';

const messageOf = (env: Record<string, string>): string => {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error('the configuration was accepted');
};

describe('ASTERISK_CDR_URL (the CDR ledger)', () => {
  it('takes a mysql:// URL, alone or with PBX_EVENTS=ami', () => {
    const url = 'mysql://crm_bridge:s3cr%40t@pbx.example.com:3306/asteriskcdrdb?ssl=true';
    expect(followSettingsOf(loadConfig({ ASTERISK_CDR_URL: url })).cdrUrl).toBe(url);
    const both = loadConfig({ ASTERISK_CDR_URL: url, PBX_EVENTS: 'ami', AMI_URL: 'tcp://u:p@pbx:5038' });
    expect(followSettingsOf(both)).toMatchObject({ mode: 'ami', cdrUrl: url });
  });

  it('names a bad URL without showing the password', () => {
    const message = messageOf({ ASTERISK_CDR_URL: 'postgres://crm:s3cr3t-cdr@pbx/asteriskcdrdb' });
    expect(message).toMatch(
      /ASTERISK_CDR_URL: must be mysql:\/\/user:password@host:3306\/asteriskcdrdb \(mysqls:\/\/ or \?ssl=true for TLS\) \(this one must start with mysql:\/\/ or mysqls:\/\/\)/,
    );
    expect(message).not.toContain('s3cr3t-cdr');
    // Named once: the rule's message does not repeat the variable the configuration puts in front.
    expect(message.match(/ASTERISK_CDR_URL/g)).toHaveLength(1);
    // A password with `/`, `#`, `?` and `@`, written as it is, is read whole.
    const raw = 'mysql://crm_bridge:Ab/cd#e?f@g@pbx.example.com:3306/asteriskcdrdb';
    expect(followSettingsOf(loadConfig({ ASTERISK_CDR_URL: raw })).cdrUrl).toBe(raw);
    const port = messageOf({ ASTERISK_CDR_URL: 'mysql://crm:Ab/cd#e@pbx:99999/asteriskcdrdb' });
    expect(port).toBe(
      'Invalid configuration: ASTERISK_CDR_URL: must be mysql://user:password@host:3306/asteriskcdrdb (mysqls:// or ?ssl=true for TLS) (this one has a port outside 1-65535)',
    );
  });
});
