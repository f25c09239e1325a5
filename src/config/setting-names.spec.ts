import { AppConfig } from './app-config';
import { DEPLOYMENT_SETTING_NAMES, PORTAL_SETTING_NAMES, SINGLE_PORTAL_ONLY } from './setting-names';

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
});
