import { INestApplication } from '@nestjs/common';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { createBridge } from '../../src/app.setup';
import { AppConfig, loadConfig } from '../../src/config/app-config';
import { SandboxOptions, SandboxPortal } from '../../sandbox';
import { testDatabaseUrl } from './test-database';

export const PBX_TOKEN = 'pbx-test-token-7f3a';
export const ADMIN_TOKEN = 'admin-test-token-91c2';

export interface Harness {
  app: INestApplication;
  sandbox: SandboxPortal;
  config: AppConfig;
  dir: string;
  url: string;
  http: ReturnType<typeof request>;
  close(): Promise<void>;
}

/** The bridge on a real store (a SQLite file in a temp folder, or its own PostgreSQL schema), delivering over real HTTP to a sandbox portal. */
export async function startHarness(
  env: Record<string, string> = {},
  sandboxOptions: SandboxOptions = {},
  existing?: { sandbox?: SandboxPortal; dir?: string },
): Promise<Harness> {
  const sandbox = existing?.sandbox ?? (await SandboxPortal.start(sandboxOptions));
  const dir = existing?.dir ?? mkdtempSync(join(tmpdir(), 'bridge-test-'));
  const config = loadConfig(testEnv(sandbox, dir, env));
  const app = await createBridge(config);
  await app.listen(0, '127.0.0.1');
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  return {
    app,
    sandbox,
    config,
    dir,
    url,
    http: request(url),
    async close() {
      await app.close();
      if (!existing?.sandbox) await sandbox.close();
      if (!existing?.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function testEnv(
  sandbox: SandboxPortal,
  dir: string,
  env: Record<string, string> = {},
): Record<string, string> {
  return {
    NODE_ENV: 'test',
    PBX_TOKENS: `${PBX_TOKEN},second-pbx-token`,
    ADMIN_TOKEN,
    B24_WEBHOOK_URL: sandbox.webhookUrl,
    PORTAL_ID: 'sandbox',
    DATABASE_URL: testDatabaseUrl(dir),
    DEFAULT_COUNTRY: 'DE',
    B24_DEFAULT_USER_ID: '1',
    B24_TIMEOUT_MS: '2000',
    DELIVERY_MAX_BACKOFF_SEC: '2',
    LOG_LEVEL: 'error',
    ...env,
  };
}

/** Polls until `check` returns a value (not undefined) or the deadline passes; returns the last value. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 20000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    last = await check();
    if (last !== undefined) return last;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A ringing inbound call's `call.started`, as a PBX posts it; `extra` overrides fields. */
export const started = (callId: string, extra: Record<string, unknown> = {}) => ({
  event: 'call.started',
  callId,
  direction: 'inbound',
  phoneNumber: '+49 151 1234-5678',
  extension: '101',
  at: '2026-11-22T10:00:00+01:00',
  ...extra,
});

/** Its `call.ended`: answered after two minutes; `extra` overrides fields. */
export const ended = (callId: string, extra: Record<string, unknown> = {}) => ({
  event: 'call.ended',
  callId,
  at: '2026-11-22T10:02:07+01:00',
  durationSec: 121,
  status: 'answered',
  ...extra,
});

/** `count` calls (started + ended), ten to a PBX request. */
export function callBodies(prefix: string, count: number): unknown[][] {
  const events = Array.from({ length: count }, (_, index) => {
    const callId = `${prefix}-${index}`;
    return [
      {
        event: 'call.started',
        callId,
        direction: 'inbound',
        phoneNumber: `+49151${String(2000000 + index)}`,
        extension: '101',
        at: '2026-11-22T10:00:00+01:00',
      },
      { event: 'call.ended', callId, at: '2026-11-22T10:01:00+01:00', durationSec: 60, status: 'answered' },
    ];
  });
  return Array.from({ length: Math.ceil(count / 10) }, (_, i) => events.slice(i * 10, i * 10 + 10).flat());
}
