import { INestApplication } from '@nestjs/common';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { createBridge } from '../../src/app.setup';
import { AppConfig, loadConfig } from '../../src/config/app-config';
import { SandboxPortal, SandboxTenant } from '../../sandbox';
import { ADMIN_TOKEN } from './bridge-harness';
import { freePort } from './bridge-process';
import { testDatabaseUrl } from './test-database';

/** A bridge in `B24_APP_MODE=multi`: the sandbox's root is the vendor's OAuth server, its tenants the portals. */
export interface MultiBridge {
  app: INestApplication;
  config: AppConfig;
  /** Also its PUBLIC_URL: the install and event handlers are here. */
  url: string;
  http: ReturnType<typeof request>;
  close(): Promise<void>;
}

/** A `B24_APP_MODE=multi` bridge's environment on `databaseUrl`; `env` overrides. */
export function multiEnvOn(
  sandbox: SandboxPortal,
  databaseUrl: string,
  env: Record<string, string> = {},
): Record<string, string> {
  return {
    NODE_ENV: 'test',
    B24_APP_MODE: 'multi',
    // The PBX doubles listen on loopback: here that is the operator's network (a VPN in production).
    // Specs of the tenant rule itself (SPEC §8) set it to '' or to another network.
    TENANT_ALLOWED_NETWORKS: '127.0.0.0/8',
    ADMIN_TOKEN,
    B24_OAUTH_URL: sandbox.url,
    B24_CLIENT_ID: sandbox.oauthApp.clientId,
    B24_CLIENT_SECRET: sandbox.oauthApp.clientSecret,
    DATABASE_URL: databaseUrl,
    DEFAULT_COUNTRY: 'DE',
    B24_DEFAULT_USER_ID: '1',
    B24_TIMEOUT_MS: '2000',
    DELIVERY_MAX_BACKOFF_SEC: '2',
    LOG_LEVEL: 'error',
    ...env,
  };
}

/** The same on this test run's store for `dir` (a SQLite file, or its own PostgreSQL schema). */
export function multiEnv(
  sandbox: SandboxPortal,
  dir: string,
  env: Record<string, string> = {},
): Record<string, string> {
  return multiEnvOn(sandbox, testDatabaseUrl(dir), env);
}

export async function startMultiBridge(
  sandbox: SandboxPortal,
  dir: string,
  env: Record<string, string> = {},
): Promise<MultiBridge> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const config = loadConfig(multiEnv(sandbox, dir, { PUBLIC_URL: url, ...env }));
  const app = await createBridge(config);
  await app.listen(port, '127.0.0.1');
  return { app, config, url, http: request(url), close: () => app.close() };
}

export function tempDir(prefix = 'bridge-multi-'): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The tenant installs the application: its real ONAPPINSTALL post to the bridge's handler. */
export async function install(tenant: SandboxTenant, bridgeUrl: string): Promise<number | null> {
  const outcome = await tenant.installApp(`${bridgeUrl}/oauth/install`);
  return outcome?.status ?? null;
}

export async function uninstall(tenant: SandboxTenant, bridgeUrl: string): Promise<number | null> {
  const outcome = await tenant.uninstallApp(`${bridgeUrl}/oauth/events`);
  return outcome?.status ?? null;
}

/** A new PBX token of the portal, as its operator gets it (shown once). */
export async function pbxTokenFor(
  bridge: { http: ReturnType<typeof request> },
  portalId: string,
): Promise<string> {
  const response = await bridge.http
    .post(`/v1/admin/portals/${portalId}/pbx-tokens`)
    .set('Authorization', `Bearer ${ADMIN_TOKEN}`)
    .send({ label: 'main PBX' });
  if (response.status !== 201) throw new Error(`pbx-tokens answered ${response.status} ${response.text}`);
  return response.body.token as string;
}
