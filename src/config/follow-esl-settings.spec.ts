import { ConfigError, loadConfig } from './app-config';
import { followSettingsOf } from './settings';

function messageOf(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('PBX_EVENTS=esl settings (docs/API.md)', () => {
  it('requires ESL_URL and names the modes', () => {
    expect(messageOf({ PBX_EVENTS: 'esl' })).toMatch(/ESL_URL: required when PBX_EVENTS=esl/);
    expect(messageOf({ PBX_EVENTS: 'sip' })).toMatch(/PBX_EVENTS must be ami or esl/);
  });

  it('takes a password URL or a directory user (userauth), and never shows a bad one back', () => {
    const url = 'tcp://:Cl0eCon-s3cr3t@pbx.example.com:8021';
    expect(followSettingsOf(loadConfig({ PBX_EVENTS: 'esl', ESL_URL: url }))).toMatchObject({
      mode: 'esl',
      eslUrl: url,
    });
    const user = 'tcp://crm%40default:Cl0eCon-s3cr3t@pbx.example.com:8021';
    expect(followSettingsOf(loadConfig({ PBX_EVENTS: 'esl', ESL_URL: user })).eslUrl).toBe(user);
    const bad = messageOf({ PBX_EVENTS: 'esl', ESL_URL: 'Cl0eCon-s3cr3t' });
    expect(bad).toMatch(/ESL_URL/);
    expect(bad).not.toContain('Cl0eCon-s3cr3t');
  });
});
