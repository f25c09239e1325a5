import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { load } from 'js-yaml';
import { SandboxPortal } from '../../sandbox';
import { AppConfig, loadConfig } from '../../src/config/app-config';
import { SECRET_SETTING_NAMES } from '../../src/config/setting-names';
import { testEnv } from '../support/bridge-harness';
import { freePort, startBridgeProcess } from '../support/bridge-process';
import {
  ComposeModel,
  deployDir,
  durationSec,
  envFile,
  envFileNames,
  renderCompose,
  renderFailure,
} from './compose-support';

const known = Object.keys(new AppConfig());
const secrets: readonly string[] = SECRET_SETTING_NAMES;
/** The longest a SIGTERM'd bridge may spend on requests in flight and closing the store, besides the batch. */
const drainAllowanceSec = 10;

const embedded = renderCompose(['compose.yaml']);
const withPostgres = renderCompose(['compose.yaml', 'compose.postgres.yaml'], 'postgres.env.example');
const variants: [string, ComposeModel][] = [
  ['compose.yaml (SQLite)', embedded],
  ['compose.yaml + compose.postgres.yaml', withPostgres],
];
/** The files as written, before interpolation: where each value comes from. */
const raw = (file: string) =>
  load(readFileSync(resolve(deployDir, file), 'utf8')) as {
    services: Record<string, { environment?: Record<string, string> }>;
  };

describe('deploy/bridge.env.example', () => {
  const names = envFileNames('bridge.env.example');
  const settings = envFile('bridge.env.example');

  it('names settings only, each once', () => {
    expect(names.filter((name) => !known.includes(name))).toEqual([]);
    expect(new Set(names).size).toBe(names.length);
  });

  it('lists every secret setting, so an operator sees where each goes', () => {
    expect(secrets.filter((name) => !names.includes(name))).toEqual([]);
  });

  it('starts in production once its placeholders are replaced', () => {
    expect(settings.NODE_ENV).toBe('production');
    const own = Object.fromEntries(
      Object.entries(settings).map(([name, value]) => [name, value.replace(/replace-with/g, 'own-random')]),
    );
    const config = loadConfig(own);
    expect(config.sandboxMode).toBe(false);
    expect(config.PBX_TOKENS.length).toBeGreaterThan(0);
  });

  it('refuses to start with its placeholders unchanged, naming each', () => {
    expect(() => loadConfig(settings)).toThrow(
      /(?=.*PBX_TOKENS: still the repository's placeholder)(?=.*ADMIN_TOKEN: still)(?=.*B24_WEBHOOK_URL: still)/s,
    );
  });
});

describe.each(variants)('deploy/%s', (_name, model) => {
  const bridge = model.services.bridge;
  const port = bridge.environment.PORT ?? '3000';

  it('builds the bridge from the project’s Dockerfile', () => {
    const context = resolve(deployDir, bridge.build!.context);
    expect(existsSync(join(context, bridge.build!.dockerfile ?? 'Dockerfile'))).toBe(true);
    expect(existsSync(join(context, 'package.json'))).toBe(true);
  });

  it('gives the bridge settings only, which start it in production once the placeholders are replaced', () => {
    expect(Object.keys(bridge.environment).filter((name) => !known.includes(name))).toEqual([]);
    const own = Object.fromEntries(
      Object.entries(bridge.environment).map(([name, value]) => [
        name,
        value.replace(/replace-with/g, 'own'),
      ]),
    );
    expect(loadConfig(own).sandboxMode).toBe(false);
    expect(() => loadConfig(bridge.environment)).toThrow(/still the repository's placeholder/);
  });

  it('writes no secret into a compose file: each comes from an env file', () => {
    for (const file of ['compose.yaml', 'compose.postgres.yaml']) {
      for (const [service, { environment = {} }] of Object.entries(raw(file).services)) {
        for (const [name, value] of Object.entries(environment)) {
          const credential = secrets.includes(name) || /PASSWORD|TOKEN|SECRET/.test(name);
          // A URL's password part, or the whole value, is a ${…} read from --env-file.
          if (credential) {
            expect([file, service, name, String(value)]).toEqual([
              file,
              service,
              name,
              expect.stringMatching(/^(\$\{[A-Z_]+[^}]*\}|[a-z]+:\/\/[^:/]+:\$\{[A-Z_]+[^}]*\}@.+)$/),
            ]);
          }
        }
      }
    }
  });

  it('publishes the bridge’s PORT, probes it, and keeps the store on a named volume', () => {
    expect(bridge.ports).toEqual([`3000:${port}`]);
    expect(bridge.healthcheck!.test.join(' ')).toMatch(/process\.env\.PORT \|\| 3000.*\/health\/ready/);
    expect(bridge.volumes).toContain('bridge-data:/app/data');
    expect(Object.keys(model.volumes ?? {})).toContain('bridge-data');
    for (const [service, { volumes = [] }] of Object.entries(model.services)) {
      for (const volume of volumes) {
        expect([service, Object.keys(model.volumes ?? {})]).toEqual([
          service,
          expect.arrayContaining([volume.split(':')[0]]),
        ]);
      }
    }
  });

  it('restarts every service unless stopped, each with a health check', () => {
    for (const [service, definition] of Object.entries(model.services)) {
      expect([service, definition.restart]).toEqual([service, 'unless-stopped']);
      expect([service, definition.healthcheck?.test[0]]).toEqual([service, 'CMD']);
    }
  });

  it('lets a SIGTERM’d bridge drain: the stop grace period outlasts the batch in flight', () => {
    const setting = (name: 'SHUTDOWN_DELAY_MS' | 'B24_TIMEOUT_MS') =>
      Number(bridge.environment[name] ?? new AppConfig()[name]) / 1000;
    const drain = setting('SHUTDOWN_DELAY_MS') + setting('B24_TIMEOUT_MS') + drainAllowanceSec;
    expect(durationSec(bridge.stop_grace_period!)).toBeGreaterThan(drain);
  });
});

describe('deploy/compose.yaml (SQLite)', () => {
  it('leaves DATABASE_URL unset: the embedded store on the volume', () => {
    expect(embedded.services.bridge.environment.DATABASE_URL).toBeUndefined();
    expect(Object.keys(embedded.services)).toEqual(['bridge']);
  });
});

describe('deploy/compose.yaml + compose.postgres.yaml', () => {
  const { bridge, postgres } = withPostgres.services;

  it('points DATABASE_URL at the postgres service, with its user, password and database', () => {
    const url = new URL(bridge.environment.DATABASE_URL);
    expect(url.protocol).toBe('postgres:');
    expect(url.hostname).toBe('postgres');
    expect(url.port).toBe('5432');
    expect(url.username).toBe(postgres.environment.POSTGRES_USER);
    expect(decodeURIComponent(url.password)).toBe(envFile('postgres.env.example').POSTGRES_PASSWORD);
    expect(postgres.environment.POSTGRES_PASSWORD).toBe(decodeURIComponent(url.password));
    expect(url.pathname).toBe(`/${postgres.environment.POSTGRES_DB}`);
    expect(loadConfig({ ...bridge.environment, NODE_ENV: 'test' }).DATABASE_URL).toBe(url.href);
  });

  it('starts the bridge once PostgreSQL is healthy, and keeps its data on a named volume', () => {
    expect(bridge.depends_on).toEqual({
      postgres: expect.objectContaining({ condition: 'service_healthy' }),
    });
    expect(postgres.healthcheck!.test).toEqual(expect.arrayContaining(['pg_isready']));
    expect(postgres.volumes).toEqual([expect.stringMatching(/^postgres-data:\/var\/lib\/postgresql\/data$/)]);
  });

  it('refuses to render without the password, naming it', () => {
    const failure = renderFailure(['compose.yaml', 'compose.postgres.yaml']);
    expect(failure.status).toBe(1);
    expect(failure.stderr).toMatch(/POSTGRES_PASSWORD: set POSTGRES_PASSWORD/);
  });
});

describe('the compose health check', () => {
  let sandbox: SandboxPortal;
  let dir: string;

  beforeAll(async () => {
    sandbox = await SandboxPortal.start();
    dir = mkdtempSync(join(tmpdir(), 'bridge-compose-'));
  });
  afterAll(async () => {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const check = (port: number) => {
    const [, command, ...args] = embedded.services.bridge.healthcheck!.test;
    expect(command).toBe('node');
    return spawnSync(process.execPath, args, { env: { PORT: String(port) }, timeout: 20000 }).status;
  };

  it('passes against a ready bridge and fails where none answers', async () => {
    const bridge = await startBridgeProcess(testEnv(sandbox, dir));
    try {
      expect(check(Number(new URL(bridge.url).port))).toBe(0);
    } finally {
      bridge.child.kill('SIGKILL');
      await bridge.exited;
    }
    expect(check(await freePort())).toBe(1);
  });
});
