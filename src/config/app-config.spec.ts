import { AppConfig, ConfigError, loadConfig, sandboxModeOf, withSandboxPortal } from './app-config';
import { portalIdOf } from './portal-id';

describe('loadConfig', () => {
  it('uses the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      PORT: 3000,
      B24_RATE_LIMIT_RPS: 2,
      B24_RATE_BURST: 50,
      B24_BATCH_SIZE: 50,
    });
    expect(config.sandboxMode).toBe(true);
  });

  it('names the variable of a bad value', () => {
    expect(() => loadConfig({ B24_BATCH_SIZE: '80' })).toThrow(/B24_BATCH_SIZE/);
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT/);
    expect(() => loadConfig({ DATABASE_URL: 'mysql://x' })).toThrow(/DATABASE_URL/);
    expect(() => loadConfig({ B24_WEBHOOK_URL: 'https://portal.example.com/api' })).toThrow(ConfigError);
  });

  it('bounds PBX_TRUNKS: at most 50 patterns of at most 100 characters, one error naming it', () => {
    const fifty = Array.from({ length: 50 }, (_, i) => `PJSIP/t${i}*`);
    expect(loadConfig({ PBX_TRUNKS: fifty.join(',') }).PBX_TRUNKS).toHaveLength(50);
    expect(loadConfig({ PBX_TRUNKS: `PJSIP/${'a'.repeat(93)}*` }).PBX_TRUNKS[0]).toHaveLength(100);
    expect(() => loadConfig({ PBX_TRUNKS: [...fifty, 'PJSIP/x*'].join(',') })).toThrow(
      /PBX_TRUNKS takes at most 50 patterns/,
    );
    const long = `PJSIP/${'a'.repeat(94)}*`;
    expect(() => loadConfig({ PBX_TRUNKS: long })).toThrow(/PBX_TRUNKS patterns are at most 100 characters/);
    expect(() => loadConfig({ PBX_TRUNKS: long })).not.toThrow(new RegExp('a'.repeat(94)));
  });

  it('refuses to fall back to the sandbox in production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production', PBX_TOKENS: 'a' })).toThrow(/B24_WEBHOOK_URL/);
  });

  it('never puts a secret value in its message', () => {
    const error = thrownBy(() =>
      loadConfig({ B24_WEBHOOK_URL: 'https://portal.example.com/hook/s3cr3tcode', PBX_TOKENS: 'tok' }),
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toMatch(/B24_WEBHOOK_URL/);
    expect(error.message).not.toContain('s3cr3tcode');
  });

  it('is frozen, its lists too: nothing changes it after validation', () => {
    const config = loadConfig({ PBX_TOKENS: 'a,b', B24_ALLOWED_DOMAINS: '*.example.com' });
    expect(Object.isFrozen(config)).toBe(true);
    expect(() => Object.assign(config, { PORT: 1 })).toThrow(TypeError);
    expect(() => (config.PBX_TOKENS as string[]).push('c')).toThrow(TypeError);
    expect(() => (config.B24_ALLOWED_DOMAINS as string[]).pop()).toThrow(TypeError);
    expect(config).toMatchObject({
      PORT: 3000,
      PBX_TOKENS: ['a', 'b'],
      B24_ALLOWED_DOMAINS: ['*.example.com'],
    });
  });
});

/** The error `load` throws; fails the test when it throws none. */
function thrownBy(load: () => unknown): Error {
  let thrown: unknown;
  try {
    load();
  } catch (error) {
    thrown = error;
  }
  if (!(thrown instanceof Error)) throw new Error('expected an error, none was thrown');
  return thrown;
}

describe('sandbox mode', () => {
  const webhookUrl = 'http://127.0.0.1:8099/rest/1/sandbox-code/';
  const portal = 'https://portal.example.com/rest/1/webhookcode/';

  it('is asked for, or the lack of a portal outside production', () => {
    const of = (env: Record<string, string>) => sandboxModeOf(loadConfig(env));
    expect(of({})).toBe(true);
    expect(of({ SANDBOX: '1' })).toBe(true);
    expect(of({ B24_WEBHOOK_URL: portal })).toBe(false);
    expect(
      of({ B24_PORTAL_URL: 'https://portal.example.com', B24_CLIENT_ID: 'a', B24_CLIENT_SECRET: 's' }),
    ).toBe(false);
    expect(
      of({ NODE_ENV: 'production', B24_WEBHOOK_URL: portal, PBX_TOKENS: 'a-pbx-token-of-24-chars!' }),
    ).toBe(false);
  });

  it("delivers to the sandbox portal by webhook, on a new configuration: the operator's is unchanged", () => {
    for (const env of [{ SANDBOX: '1' }, {}, { B24_AUTH_MODE: 'oauth' }]) {
      const operator = loadConfig(env);
      const config = withSandboxPortal(operator, webhookUrl);
      expect(config).toBeInstanceOf(AppConfig);
      expect(config).toMatchObject({ B24_WEBHOOK_URL: webhookUrl, PORTAL_ID: 'sandbox', SANDBOX: true });
      expect(config.authMode).toBe('webhook');
      expect(config.sandboxMode).toBe(true);
      expect(portalIdOf(config)).toBe('sandbox');
      expect(Object.isFrozen(config)).toBe(true);
      expect(operator.B24_WEBHOOK_URL).toBeUndefined();
      expect(operator.PORTAL_ID).toBeUndefined();
    }
  });

  it("keeps the operator's settings and PORTAL_ID", () => {
    const operator = loadConfig({ SANDBOX: 'yes', PORTAL_ID: 'demo', PORT: '4000', PBX_TOKENS: 'tok' });
    expect(withSandboxPortal(operator, webhookUrl)).toMatchObject({
      PORTAL_ID: 'demo',
      PORT: 4000,
      PBX_TOKENS: ['tok'],
    });
  });

  it('refuses to replace a configured portal, and a malformed sandbox address', () => {
    expect(() => withSandboxPortal(loadConfig({ B24_WEBHOOK_URL: portal }), webhookUrl)).toThrow(
      /SANDBOX: a portal is configured/,
    );
    expect(() => withSandboxPortal(loadConfig({}), 'http://127.0.0.1:8099/hook')).toThrow(/B24_WEBHOOK_URL/);
  });
});

describe('LOG_LEVEL', () => {
  it("takes pino's level names as well as Nest's", () => {
    for (const level of ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent', 'log', 'verbose']) {
      expect(loadConfig({ LOG_LEVEL: level }).LOG_LEVEL).toBe(level);
    }
  });

  it('names the accepted levels when given another', () => {
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).toThrow(
      /LOG_LEVEL must be one of silent, fatal, error, warn, info, log, debug, verbose, trace/,
    );
  });
});

describe('risky settings', () => {
  const production = {
    NODE_ENV: 'production',
    PBX_TOKENS: 'a-pbx-token-of-24-chars!',
    B24_WEBHOOK_URL: 'https://portal.example.com/rest/1/webhookcode/',
  };
  const problemsOf = (env: Record<string, string>): string => {
    try {
      loadConfig(env);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    }
    throw new Error('expected a ConfigError');
  };

  it('starts in production with an https portal and long PBX tokens', () => {
    expect(loadConfig(production).sandboxMode).toBe(false);
    const oauth = { ...production, B24_WEBHOOK_URL: '', B24_PORTAL_URL: 'https://portal.example.com' };
    expect(loadConfig({ ...oauth, B24_CLIENT_ID: 'app.1', B24_CLIENT_SECRET: 's' }).authMode).toBe('oauth');
  });

  it('refuses the sandbox in production, naming SANDBOX only', () => {
    const message = problemsOf({ NODE_ENV: 'production', PBX_TOKENS: production.PBX_TOKENS, SANDBOX: '1' });
    expect(message).toMatch(/SANDBOX: .*NODE_ENV=production/);
    expect(message).not.toMatch(/B24_WEBHOOK_URL/);
  });

  it('refuses the sandbox beside a configured portal, in any environment', () => {
    expect(problemsOf({ SANDBOX: '1', B24_WEBHOOK_URL: production.B24_WEBHOOK_URL })).toMatch(
      /SANDBOX: set either SANDBOX or a portal/,
    );
    expect(problemsOf({ SANDBOX: 'true', B24_PORTAL_URL: 'https://portal.example.com' })).toMatch(/SANDBOX/);
    expect(loadConfig({ SANDBOX: '1' }).sandboxMode).toBe(true);
  });

  it('refuses plain-http portal and OAuth URLs in production, and only there', () => {
    const webhook = 'http://portal.example.com/rest/1/webhookcode/';
    expect(problemsOf({ ...production, B24_WEBHOOK_URL: webhook })).toMatch(
      /B24_WEBHOOK_URL: must be an https:\/\/ URL in production/,
    );
    expect(
      problemsOf({
        ...production,
        B24_WEBHOOK_URL: '',
        B24_PORTAL_URL: 'http://portal.example.com',
        B24_OAUTH_URL: 'http://oauth.example.com',
        B24_CLIENT_ID: 'app.1',
        B24_CLIENT_SECRET: 's',
      }),
    ).toMatch(/B24_PORTAL_URL: must be an https.*B24_OAUTH_URL: must be an https/);
    expect(loadConfig({ NODE_ENV: 'test', B24_WEBHOOK_URL: webhook }).B24_WEBHOOK_URL).toBe(webhook);
  });

  it('refuses PBX tokens shorter than 16 characters in production without showing them', () => {
    const message = problemsOf({ ...production, PBX_TOKENS: `${production.PBX_TOKENS},short-tok3n` });
    expect(message).toMatch(/PBX_TOKENS: every token must be at least 16 characters .*token 2 of 2/);
    expect(message).not.toContain('short-tok3n');
    expect(loadConfig({ ...production, PBX_TOKENS: 'sixteen-chars-ok' }).PBX_TOKENS).toHaveLength(1);
    expect(loadConfig({ NODE_ENV: 'development', PBX_TOKENS: 'short' }).PBX_TOKENS).toEqual(['short']);
  });
});

describe('B24_APP_MODE=multi', () => {
  const multi = {
    NODE_ENV: 'production',
    B24_APP_MODE: 'multi',
    B24_CLIENT_ID: 'app.1',
    B24_CLIENT_SECRET: 'secret-value',
    B24_OAUTH_URL: 'https://oauth.example.com',
    PUBLIC_URL: 'https://bridge.example.com',
    ADMIN_TOKEN: 'an-admin-token-long-enough',
  };
  const problems = (env: Record<string, string>) => {
    try {
      loadConfig(env);
      return '';
    } catch (error) {
      return (error as Error).message;
    }
  };

  it('is an OAuth application of no one portal, never the sandbox, and needs no PBX_TOKENS', () => {
    const config = loadConfig(multi);
    expect(config.authMode).toBe('oauth');
    expect(config.sandboxMode).toBe(false);
    expect(loadConfig({ ...multi, NODE_ENV: 'development' }).sandboxMode).toBe(false);
  });

  it("needs the OAuth server and the application, and refuses one portal's settings, naming each", () => {
    const message = problems({
      B24_APP_MODE: 'multi',
      B24_PORTAL_URL: 'https://portal.example.com',
      PBX_TOKENS: 'a-pbx-token-of-one-portal',
      DIAL_MODE: 'http',
      DIAL_URL: 'https://pbx.example.com/dial',
    });
    for (const name of [
      'B24_CLIENT_ID',
      'B24_CLIENT_SECRET',
      'B24_OAUTH_URL',
      'B24_PORTAL_URL',
      'PBX_TOKENS',
      'DIAL_MODE',
    ]) {
      expect(message).toContain(`${name}:`);
    }
    expect(message).not.toContain('a-pbx-token-of-one-portal');
  });

  it('needs ADMIN_TOKEN and https in production', () => {
    const message = problems({ ...multi, ADMIN_TOKEN: '', B24_OAUTH_URL: 'http://oauth.example.com' });
    expect(message).toContain('ADMIN_TOKEN: required');
    expect(message).toContain('B24_OAUTH_URL: must be an https');
  });
});
