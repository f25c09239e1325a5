import { AppConfig } from './app-config';
import {
  DEPLOYMENT_SETTING_NAMES,
  PORTAL_SETTING_NAMES,
  SECRET_SETTING_NAMES,
  SETTING_DECLARATIONS,
  SINGLE_PORTAL_ONLY,
} from './setting-names';

describe('setting scopes', () => {
  it('puts every variable in exactly one scope, the deployment in at most 30', () => {
    const names = [...DEPLOYMENT_SETTING_NAMES, ...PORTAL_SETTING_NAMES];
    expect(names.sort()).toEqual(Object.keys(new AppConfig()).sort());
    expect(DEPLOYMENT_SETTING_NAMES.length).toBeLessThanOrEqual(30);
  });

  it('refuses in multi mode only what names one portal: portal settings, and the sandbox', () => {
    const refused = Object.keys(SINGLE_PORTAL_ONLY);
    expect(refused.filter((name) => !(PORTAL_SETTING_NAMES as readonly string[]).includes(name))).toEqual([
      'SANDBOX',
    ]);
  });

  it('flags as secret exactly the variables .env.example calls secret, credentials in URLs included', () => {
    const calledSecret = Object.entries(SETTING_DECLARATIONS)
      .filter(([, declared]) => declared.about.startsWith('secret'))
      .map(([name]) => name);
    expect(SECRET_SETTING_NAMES).toEqual(calledSecret);
    expect(SECRET_SETTING_NAMES).toEqual(
      expect.arrayContaining(['DATABASE_URL', 'AMI_URL', 'ESL_URL', 'ASTERISK_CDR_URL', 'PBX_TOKENS']),
    );
  });
});
