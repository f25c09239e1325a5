import { loadConfig } from './app-config';
import {
  authSettingsOf,
  deliverySettingsOf,
  intakeSettingsOf,
  lookupSettingsOf,
  portalSettingsOf,
  securitySettingsOf,
  serverSettingsOf,
  SETTINGS,
  settingsOf,
  storeSettingsOf,
} from './settings';

describe('typed settings', () => {
  it('convert seconds and days to milliseconds, once', () => {
    const config = loadConfig({
      DELIVERY_MAX_BACKOFF_SEC: '2',
      DELIVERY_LEASE_SEC: '12',
      HOLD_ENDED_WITHOUT_START_SEC: '90',
      DELIVERY_MAX_ATTEMPTS: '3',
      B24_DEFAULT_USER_ID: '7',
      LOOKUP_CACHE_TTL_SEC: '60',
      EMPLOYEE_REFRESH_SEC: '120',
      OAUTH_STATE_TTL_SEC: '30',
      RETENTION_DAYS: '2',
      DIAL_MATCH_SEC: '45',
    });
    expect(deliverySettingsOf(config)).toEqual({
      defaultUserId: 7,
      maxBackoffMs: 2000,
      maxAttempts: 3,
      leaseMs: 12_000,
      holdEndedWithoutStartMs: 90_000,
      maxInFlight: 16,
      missedCallTaskDeadlineMs: undefined,
      missedCallTaskWindowMs: 3_600_000,
      dialMatchMs: 45_000,
      lines: { defaultLine: 'pbx-bridge', rules: [], byLine: new Map() },
    });
    expect(lookupSettingsOf(config)).toMatchObject({ cacheTtlMs: 60_000, employeeRefreshMs: 120_000 });
    expect(authSettingsOf(config).stateTtlMs).toBe(30_000);
    expect(storeSettingsOf(config)).toMatchObject({ retentionMs: 2 * 86_400_000, retentionDays: 2 });
  });

  it('carry the defaults in the units the code uses', () => {
    const config = loadConfig({});
    expect(storeSettingsOf(config)).toEqual({
      databaseUrl: 'sqlite:./data/bridge.sqlite',
      poolSize: 10,
      portalRetentionMs: 2_592_000_000,
      retentionMs: 30 * 86_400_000,
      retentionDays: 30,
    });
    expect(portalSettingsOf(config)).toEqual({
      rateLimitRps: 2,
      burst: 50,
      timeoutMs: 15_000,
      batchSize: 50,
      allowedDomains: [],
      apiVersion: undefined,
      operatingLimitSec: 480,
      operatingWindowMs: 600_000,
    });
    expect(intakeSettingsOf(config)).toMatchObject({
      bodyLimitBytes: 1024 * 1024,
      rateLimitRps: 200,
      timeZone: 'UTC',
    });
    expect(serverSettingsOf(config)).toEqual({
      port: 3000,
      environment: 'development',
      production: false,
      shutdownDelayMs: 0,
    });
    expect(authSettingsOf(config).mode).toBe('webhook');
  });

  it('name the portal, the auth mode and the tokens as configured', () => {
    const config = loadConfig({
      NODE_ENV: 'production',
      B24_PORTAL_URL: 'https://portal.example.com',
      B24_CLIENT_ID: 'app.1',
      B24_CLIENT_SECRET: 'secret',
      PBX_TOKENS: 'a-pbx-token-of-24-chars!,another-pbx-token-24ch',
      ADMIN_TOKEN: 'admin',
      DATABASE_URL: 'postgres://bridge@db/bridge',
      B24_ALLOWED_DOMAINS: '*.example.org, portal.example.net',
      DEFAULT_COUNTRY: 'DE',
    });
    expect(authSettingsOf(config)).toMatchObject({
      mode: 'oauth',
      portalUrl: 'https://portal.example.com',
      clientId: 'app.1',
    });
    expect(securitySettingsOf(config)).toEqual({
      pbxTokens: ['a-pbx-token-of-24-chars!', 'another-pbx-token-24ch'],
      adminToken: 'admin',
      metricsToken: undefined,
    });
    expect(portalSettingsOf(config).allowedDomains).toEqual(['*.example.org', 'portal.example.net']);
    expect(storeSettingsOf(config).databaseUrl).toBe('postgres://bridge@db/bridge');
    expect(serverSettingsOf(config).production).toBe(true);
    expect(intakeSettingsOf(config).defaultCountry).toBe('DE');
    expect(lookupSettingsOf(config).defaultCountry).toBe('DE');
  });

  it('are frozen, their lists too, and all derived together by namespace', () => {
    const settings = settingsOf(loadConfig({ PBX_TOKENS: 'tok' }));
    expect(Object.keys(settings).sort()).toEqual(Object.keys(SETTINGS).sort());
    expect(Object.isFrozen(settings)).toBe(true);
    for (const view of Object.values(settings)) expect(Object.isFrozen(view)).toBe(true);
    expect(() => (settings.security.pbxTokens as string[]).push('other')).toThrow(TypeError);
    expect(() => Object.assign(settings.delivery, { maxAttempts: 1 })).toThrow(TypeError);
  });
});
