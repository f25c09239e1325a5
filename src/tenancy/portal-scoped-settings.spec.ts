import { loadConfig } from '../config/app-config';
import {
  authSettingsOf,
  deliverySettingsOf,
  dialSettingsOf,
  followSettingsOf,
  eventSettingsOf,
  intakeSettingsOf,
  lookupSettingsOf,
  portalSettingsOf,
  recordingSettingsOf,
  tenantEgressOf,
} from '../config/settings';
import { PortalOwnSettings, PortalRecord } from '../store/portal-store';
import { DeploymentSettings, resolvePortalSettings } from './portal-scoped-settings';
import { seededPortal } from './seeded-portal';

/** The deployment's views of an environment, as the registry hands them to the resolver. */
function deploymentOf(env: Record<string, string>): DeploymentSettings {
  // Built in single mode so the deployment's recording variables can be set: the resolver must ignore them.
  const config = loadConfig(env);
  return {
    auth: authSettingsOf(config),
    portal: portalSettingsOf(config),
    delivery: deliverySettingsOf(config),
    lookup: lookupSettingsOf(config),
    recording: recordingSettingsOf(config),
    events: eventSettingsOf(config),
    portalLabel: false,
    production: config.NODE_ENV === 'production',
    egress: tenantEgressOf(config),
    intake: intakeSettingsOf(config),
  };
}

const record = (settings: PortalOwnSettings): PortalRecord => ({
  portalId: 'm-1',
  domain: 'one.example.com',
  clientEndpoint: 'https://one.example.com/rest/',
  status: 'active',
  installedAt: 1,
  settings,
  updatedAt: 1,
});

describe('resolvePortalSettings: each setting by its rule', () => {
  const deployment = deploymentOf({
    B24_RATE_LIMIT_RPS: '2',
    B24_DEFAULT_USER_ID: '1',
    DEFAULT_COUNTRY: 'DE',
    DIAL_MATCH_SEC: '60',
    RECORDING_FETCH_HOSTS: 'shared.example.com',
    RECORDING_FETCH_AUTH: 'bearer:shared-secret',
    B24_LINE_NUMBER: 'deployment-line',
    B24_EVENTS: 'offline',
    PUBLIC_URL: 'https://bridge.example.com',
  });

  it('takes the deployment’s defaults where that is safe, and never its recording hosts or credential', () => {
    const scoped = resolvePortalSettings(record({}), deployment);
    expect(scoped.portal.rateLimitRps).toBe(2);
    expect(scoped.delivery.defaultUserId).toBe(1);
    expect(scoped.lookup.defaultCountry).toBe('DE');
    expect(scoped.delivery.dialMatchMs).toBe(60_000);
    expect(scoped.events).toEqual({
      offline: true,
      lineNumber: 'deployment-line',
      publicUrl: 'https://bridge.example.com',
    });
    expect(scoped.recording.fetchHosts).toEqual([]);
    expect(scoped.recording.fetchAuthorization).toBeUndefined();
    expect(scoped.dial).toBeUndefined();
    expect('oauth' in scoped.access && scoped.access.oauth.portalUrl).toBe('https://one.example.com');
  });

  it('takes the portal’s own values: plan, user, country, line, DIAL_MATCH_SEC, recording hosts', () => {
    const scoped = resolvePortalSettings(
      record({
        rateLimitRps: 5,
        rateBurst: 250,
        defaultUserId: 7,
        defaultCountry: 'AT',
        lineNumber: 'own-line',
        missedCallTask: true,
        dial: {
          DIAL_MODE: 'http',
          DIAL_URL: 'http://pbx.one:8080/dial?ext={extension}',
          DIAL_MATCH_SEC: '5',
        },
        recordingFetch: { hosts: ['pbx.one:8443'], auth: 'bearer:own-secret' },
      }),
      deployment,
    );
    expect(scoped.portal).toMatchObject({ rateLimitRps: 5, burst: 250 });
    expect(scoped.delivery.defaultUserId).toBe(7);
    expect(scoped.dial?.defaultUserId).toBe(7);
    expect(scoped.lookup.defaultCountry).toBe('AT');
    expect(scoped.events.lineNumber).toBe('own-line');
    expect(scoped.events.publicUrl).toBe('https://bridge.example.com');
    expect(scoped.delivery.dialMatchMs).toBe(5_000);
    expect(scoped.delivery.missedCallTaskDeadlineMs).toBe(deployment.delivery.missedCallTaskWindowMs);
    expect(scoped.recording.fetchHosts).toEqual(['pbx.one:8443']);
    expect(scoped.recording.fetchAuthorization).toBe('Bearer own-secret');
    expect(scoped.problems).toEqual([]);
  });

  it('keeps the deployment’s DIAL_MATCH_SEC when the portal’s dial settings name none', () => {
    const scoped = resolvePortalSettings(
      record({ dial: { DIAL_MODE: 'http', DIAL_URL: 'http://pbx.one/dial' } }),
      deployment,
    );
    expect(scoped.delivery.dialMatchMs).toBe(60_000);
  });

  it('turns off click-to-call settings no dialer can be built from, naming the variable, never its value', () => {
    for (const url of ['http://pbx.local:{port}/x', 'http://ops:pa55word@pbx.local/x']) {
      const scoped = resolvePortalSettings(
        record({ dial: { DIAL_MODE: 'http', DIAL_URL: url } }),
        deployment,
      );
      expect(scoped.dial).toBeUndefined();
      expect(scoped.problems.join(' ')).toContain('DIAL_URL');
      expect(scoped.problems.join(' ')).not.toContain('pa55word');
    }
  });
});

describe("resolvePortalSettings for single mode's seeded portal: its stored settings over the environment's", () => {
  const env = {
    B24_WEBHOOK_URL: 'https://one.example.com/rest/1/hooksecret/',
    B24_DEFAULT_USER_ID: '1',
    DEFAULT_COUNTRY: 'DE',
    DIAL_MODE: 'http',
    DIAL_URL: 'http://pbx.env/dial?ext={extension}',
    RECORDING_FETCH_HOSTS: 'pbx.env',
    B24_LINE_NUMBER: 'env-line',
    LOOKUP_CACHE_SIZE: '5000',
  };
  const config = loadConfig(env);
  const deployment = deploymentOf(env);
  const seed = seededPortal({
    ...deployment,
    dial: dialSettingsOf(config),
    follow: followSettingsOf(config),
    intake: intakeSettingsOf(config),
    portalId: 'sandbox',
  }).defaults;

  it("takes the environment's access, click-to-call, recording hosts and whole cache where nothing is stored", () => {
    const scoped = resolvePortalSettings(record({}), deployment, seed);
    expect(scoped.access).toEqual({ webhookUrl: env.B24_WEBHOOK_URL });
    expect(scoped.dial?.url).toBe(env.DIAL_URL);
    expect(scoped.dial?.defaultUserId).toBe(1);
    expect(scoped.recording.fetchHosts).toEqual(['pbx.env']);
    expect(scoped.lookup.cacheSize).toBe(5000);
    expect(scoped.events.lineNumber).toBe('env-line');
    expect(scoped.follow).toBeUndefined();
    expect(scoped.metricsLabel).toBe('m-1');
  });

  it('a stored value wins, the same layering as with many portals', () => {
    const scoped = resolvePortalSettings(
      record({
        defaultUserId: 7,
        defaultCountry: 'AT',
        lineNumber: 'own-line',
        dial: { DIAL_MODE: 'http', DIAL_URL: 'http://pbx.own/dial' },
        follow: { PBX_EVENTS: 'ami', AMI_URL: 'tcp://crm:pw@pbx.own:5038' },
      }),
      deployment,
      seed,
    );
    expect(scoped.delivery.defaultUserId).toBe(7);
    expect(scoped.lookup.defaultCountry).toBe('AT');
    expect(scoped.events.lineNumber).toBe('own-line');
    expect(scoped.dial?.url).toBe('http://pbx.own/dial');
    expect(scoped.follow?.mode).toBe('ami');
    expect(scoped.access).toEqual({ webhookUrl: env.B24_WEBHOOK_URL });
  });
});
