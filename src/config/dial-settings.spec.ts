import { ConfigError, loadConfig } from './app-config';
import { dialSettingsOf } from './settings';

function messageOf(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('Click-to-call settings (docs/API.md)', () => {
  it('default to off, PJSIP/{extension} in from-internal, the FreeSWITCH originate, POST, 30 s and 60 s', () => {
    expect(dialSettingsOf(loadConfig({}))).toMatchObject({
      mode: undefined,
      amiChannel: 'PJSIP/{extension}',
      amiContext: 'from-internal',
      eslOriginate: '{crm_call_id={crmCallId},crm_line={line}}user/{extension} {number} XML default',
      method: 'POST',
      timeoutMs: 30_000,
      matchMs: 60_000,
    });
  });

  it('turn DIAL_AUTH into the Authorization header', () => {
    const basic = dialSettingsOf(
      loadConfig({ DIAL_MODE: 'http', DIAL_URL: 'https://pbx/dial', DIAL_AUTH: 'basic:u:p:w' }),
    );
    expect(basic.authorization).toBe(`Basic ${Buffer.from('u:p:w').toString('base64')}`);
    const bearer = dialSettingsOf(
      loadConfig({ DIAL_MODE: 'http', DIAL_URL: 'https://pbx/dial', DIAL_AUTH: 'bearer:t' }),
    );
    expect(bearer.authorization).toBe('Bearer t');
  });

  it('require the chosen mode’s address', () => {
    expect(messageOf({ DIAL_MODE: 'ami' })).toMatch(/AMI_URL: required when DIAL_MODE=ami/);
    expect(messageOf({ DIAL_MODE: 'esl' })).toMatch(/ESL_URL: required when DIAL_MODE=esl/);
    expect(messageOf({ DIAL_MODE: 'http' })).toMatch(/DIAL_URL: required when DIAL_MODE=http/);
    expect(messageOf({ DIAL_MODE: 'sip' })).toMatch(/DIAL_MODE must be ami, esl or http/);
  });

  it('name a bad secret setting without showing its value', () => {
    const ami = messageOf({ DIAL_MODE: 'ami', AMI_URL: 'http://admin:s3cr3t-ami@pbx:5038' });
    expect(ami).toMatch(/AMI_URL: must be tcp:\/\/user:secret@host:5038/);
    expect(ami).not.toContain('s3cr3t-ami');
    const esl = messageOf({ DIAL_MODE: 'esl', ESL_URL: 'ClueCon-s3cr3t' });
    expect(esl).toMatch(/ESL_URL/);
    expect(esl).not.toContain('ClueCon-s3cr3t');
    const auth = messageOf({
      DIAL_MODE: 'http',
      DIAL_URL: 'https://pbx/dial',
      DIAL_AUTH: 'digest:s3cr3t-dial',
    });
    expect(auth).toMatch(/DIAL_AUTH/);
    expect(auth).not.toContain('s3cr3t-dial');
  });

  it('accept the documented forms', () => {
    const config = loadConfig({
      DIAL_MODE: 'esl',
      ESL_URL: 'tcp://:ClueCon@10.0.0.5:8021',
      AMI_URL: 'tcp://crm:secret@pbx.local:5038',
      DIAL_TIMEOUT_SEC: '15',
    });
    expect(dialSettingsOf(config)).toMatchObject({ mode: 'esl', timeoutMs: 15_000 });
  });
});
