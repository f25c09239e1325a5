import { INestApplicationContext } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { NestFactory } from '@nestjs/core';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppConfig, loadConfig } from './app-config';
import { ConfigurationModule } from './configuration.module';
import { PORTAL_ID } from './portal-id';
import { BridgeSettings, DeliverySettings, StoreSettings } from './settings';

/**
 * Many end-to-end specs run bridges with different configurations in one process: each application sees
 * its own, and neither `.env` nor process.env takes part, in either direction.
 */
describe('ConfigurationModule', () => {
  const opened: INestApplicationContext[] = [];
  const open = async (config: AppConfig) => {
    const app = await NestFactory.createApplicationContext(ConfigurationModule.forRoot(config), {
      logger: false,
    });
    opened.push(app);
    return app;
  };
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((app) => app.close()));
  });

  it('gives two applications in one process each its own configuration, views and PORTAL_ID', async () => {
    const first = loadConfig({ PORTAL_ID: 'first', DELIVERY_MAX_BACKOFF_SEC: '2', RETENTION_DAYS: '1' });
    const second = loadConfig({ PORTAL_ID: 'second', DELIVERY_MAX_BACKOFF_SEC: '7', RETENTION_DAYS: '9' });
    const [one, two] = await Promise.all([open(first), open(second)]);

    expect(one.get(AppConfig)).toBe(first);
    expect(two.get(AppConfig)).toBe(second);
    expect([one.get(PORTAL_ID), two.get(PORTAL_ID)]).toEqual(['first', 'second']);
    expect([one.get(DeliverySettings).maxBackoffMs, two.get(DeliverySettings).maxBackoffMs]).toEqual([
      2000, 7000,
    ]);
    expect(two.get(StoreSettings).retentionDays).toBe(9);
    const service = (app: INestApplicationContext) =>
      app.get<ConfigService<BridgeSettings, true>>(ConfigService);
    expect(service(one).get('delivery', { infer: true }).maxBackoffMs).toBe(2000);
    expect(service(two).get('delivery', { infer: true })).toBe(two.get(DeliverySettings));
    expect(service(two).get('store.retentionDays', { infer: true })).toBe(9);
  });

  it('reads neither .env nor process.env, and writes nothing to process.env', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bridge-config-'));
    writeFileSync(join(dir, '.env'), 'BRIDGE_CONFIG_SPEC_MARK=from-dotenv\nPORT=4999\n');
    const before = { ...process.env };
    const cwd = process.cwd();
    try {
      process.chdir(dir);
      const app = await open(loadConfig({ PORT: '3100' }));
      const service = app.get(ConfigService);
      expect(service.get('PATH')).toBeUndefined();
      expect(service.get('BRIDGE_CONFIG_SPEC_MARK')).toBeUndefined();
      expect(app.get(AppConfig).PORT).toBe(3100);
    } finally {
      process.chdir(cwd);
      rmSync(dir, { recursive: true, force: true });
    }
    expect(process.env).toEqual(before);
  });
});
