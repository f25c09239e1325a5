import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix, resolve } from 'node:path';
import { AppConfig, loadConfig } from '../../src/config/app-config';
import { SECRET_SETTING_NAMES } from '../../src/config/setting-names';
import { deployDir, envFile, renderCompose, root } from './compose-support';

type Unit = Record<string, Record<string, string[]>>;

/** A systemd unit file (or a Quadlet unit) as section → key → values, comments and blank lines dropped. */
function parseUnit(file: string): Unit {
  const unit: Unit = {};
  let section = '';
  for (const line of readFileSync(resolve(deployDir, file), 'utf8').split('\n')) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#') || trimmed.startsWith(';')) continue;
    const header = /^\[(.+)\]$/.exec(trimmed);
    if (header) {
      section = header[1];
      unit[section] ??= {};
      continue;
    }
    const equals = trimmed.indexOf('=');
    const key = trimmed.slice(0, equals);
    (unit[section][key] ??= []).push(trimmed.slice(equals + 1));
  }
  return unit;
}

const one = (unit: Unit, section: string, key: string) => {
  const values = unit[section]?.[key] ?? [];
  if (values.length !== 1) throw new Error(`expected one ${key}= in [${section}], found ${values.length}`);
  return values[0];
};
const known = Object.keys(new AppConfig());
const operations = readFileSync(resolve(root, 'docs/OPERATIONS.md'), 'utf8');
const compose = renderCompose(['compose.yaml']).services.bridge;
/** The settings file both units read, as docs/OPERATIONS.md installs it. */
const SETTINGS_FILE = '/etc/pbx-crm-bridge/bridge.env';
const drainSec = Number(new AppConfig().B24_TIMEOUT_MS) / 1000 + 10;

/** Environment= lines' NAME=value pairs. */
const environment = (unit: Unit, section: string) =>
  Object.fromEntries(
    (unit[section]?.Environment ?? []).flatMap((line) =>
      line.split(/\s+/).map((pair) => [pair.split('=', 1)[0], pair.slice(pair.indexOf('=') + 1)]),
    ),
  );

describe.each([
  ['pbx-crm-bridge.service', 'Service'],
  ['pbx-crm-bridge.container', 'Container'],
])('deploy/%s', (file, section) => {
  const unit = parseUnit(file);

  it('reads the settings from the file the docs install, and sets only known, non-secret settings itself', () => {
    expect(one(unit, section, 'EnvironmentFile')).toBe(SETTINGS_FILE);
    expect(operations).toContain(SETTINGS_FILE);
    const own = Object.keys(environment(unit, section));
    expect(own.filter((name) => !known.includes(name))).toEqual([]);
    expect(own.filter((name) => (SECRET_SETTING_NAMES as readonly string[]).includes(name))).toEqual([]);
  });

  it('is named and installed where docs/OPERATIONS.md says', () => {
    expect(operations).toContain(`deploy/${file}`);
    const folder = file.endsWith('.container') ? '/etc/containers/systemd/' : '/etc/systemd/system/';
    expect(operations).toContain(folder);
  });
});

describe('deploy/pbx-crm-bridge.service (Node under systemd)', () => {
  const unit = parseUnit('pbx-crm-bridge.service');

  it('runs dist/main.js of the folder the docs build in, as a user of its own without privileges', () => {
    const [node, main] = one(unit, 'Service', 'ExecStart').split(/\s+/);
    expect(node).toMatch(/\/node$/);
    expect(main).toBe('/opt/pbx-crm-bridge/dist/main.js');
    expect(operations).toContain('/opt/pbx-crm-bridge');
    expect(one(unit, 'Service', 'DynamicUser')).toBe('yes');
    expect(one(unit, 'Service', 'NoNewPrivileges')).toBe('yes');
    expect(one(unit, 'Service', 'CapabilityBoundingSet')).toBe('');
    expect(one(unit, 'Service', 'ProtectSystem')).toBe('strict');
    expect(one(unit, 'Service', 'ProtectHome')).toBe('yes');
    expect(one(unit, 'Service', 'PrivateTmp')).toBe('yes');
  });

  it('keeps the default SQLite store in its state directory, which the docs name', () => {
    const state = posix.join('/var/lib', one(unit, 'Service', 'StateDirectory'));
    expect(one(unit, 'Service', 'WorkingDirectory')).toBe(state);
    // DATABASE_URL unset: relative to the working directory, so inside the only writable folder.
    const settings = { ...envFile('bridge.env.example'), ...environment(unit, 'Service') };
    const url = loadConfig({ ...settings, NODE_ENV: 'test' }).DATABASE_URL ?? 'sqlite:./data/bridge.sqlite';
    expect(url).toMatch(/^sqlite:\.\//);
    expect(posix.join(state, url.slice('sqlite:'.length))).toBe(`${state}/data/bridge.sqlite`);
    expect(operations).toContain(`${state}/data/bridge.sqlite`);
  });

  it('restarts on failure and gives the drain time before it kills', () => {
    expect(one(unit, 'Service', 'Restart')).toBe('on-failure');
    expect(Number.parseInt(one(unit, 'Service', 'TimeoutStopSec'), 10)).toBeGreaterThan(drainSec);
    expect(one(unit, 'Service', 'SuccessExitStatus')).toBe('143');
  });

  const analyze = spawnSync('systemd-analyze', ['--version']).error === undefined;
  (analyze ? it : it.skip)(
    'passes systemd-analyze verify without a warning (skipped without systemd)',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'bridge-unit-'));
      try {
        copyFileSync(resolve(deployDir, 'pbx-crm-bridge.service'), join(dir, 'pbx-crm-bridge.service'));
        const run = spawnSync('systemd-analyze', ['verify', join(dir, 'pbx-crm-bridge.service')], {
          encoding: 'utf8',
        });
        // ExecStart's node may live elsewhere on this machine; every other complaint counts.
        const complaints = run.stderr.split('\n').filter((line) => line && !line.includes('/usr/bin/node'));
        expect(complaints).toEqual([]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});

describe('deploy/pbx-crm-bridge.container (Podman Quadlet)', () => {
  const unit = parseUnit('pbx-crm-bridge.container');
  const port = envFile('bridge.env.example').PORT ?? '3000';

  it('publishes the bridge’s PORT and keeps the store on a named volume at /app/data', () => {
    expect(one(unit, 'Container', 'PublishPort')).toBe(`3000:${port}`);
    expect(one(unit, 'Container', 'Volume')).toMatch(/^[\w.-]+:\/app\/data$/);
    expect(one(unit, 'Container', 'ReadOnly')).toBe('true');
    expect(one(unit, 'Container', 'DropCapability')).toBe('ALL');
    expect(one(unit, 'Container', 'NoNewPrivileges')).toBe('true');
  });

  it('checks health with the compose file’s probe, and is started again when it fails', () => {
    const command = JSON.parse(one(unit, 'Container', 'HealthCmd')) as string[];
    expect(['CMD', ...command]).toEqual(compose.healthcheck!.test);
    expect(one(unit, 'Container', 'HealthOnFailure')).toBe('kill');
    expect(one(unit, 'Service', 'Restart')).toBe('always');
  });

  it('gives the drain time before podman kills', () => {
    expect(Number(one(unit, 'Container', 'StopTimeout'))).toBeGreaterThan(drainSec);
    expect(Number.parseInt(one(unit, 'Service', 'TimeoutStopSec'), 10)).toBeGreaterThan(
      Number(one(unit, 'Container', 'StopTimeout')),
    );
  });
});
