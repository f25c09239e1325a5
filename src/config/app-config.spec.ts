import { ConfigError, loadConfig } from './app-config';

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

  it('refuses to fall back to the sandbox in production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production', PBX_TOKENS: 'a' })).toThrow(/B24_WEBHOOK_URL/);
  });

  it('never puts a secret value in its message', () => {
    try {
      loadConfig({ B24_WEBHOOK_URL: 'https://portal.example.com/hook/s3cr3tcode', PBX_TOKENS: 'tok' });
      throw new Error('expected a ConfigError');
    } catch (error) {
      expect((error as Error).message).not.toContain('s3cr3tcode');
    }
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
