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
