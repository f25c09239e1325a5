#!/usr/bin/env node
// What `docker compose config --format json` prints, for the few features deploy/compose*.yaml use, without
// a container engine: test/k8s/compose.e2e-spec.ts checks the files with it, and scripts/build-image.sh's
// `compose` step runs the image with the environment it resolves.
//
//   node scripts/compose-config.js [--env-file FILE] [--env-file-as NAME=FILE] -f FILE [-f FILE…]
//
// `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?message}`, `${VAR?message}`, `$VAR` and `$$` are
// interpolated from --env-file (else the process's environment) in every string value, as compose does. Later
// files merge into earlier ones (maps key by key, lists appended). Each service's env_file is read (paths
// relative to the first file's folder, as compose's project directory; --env-file-as reads another file in
// a name's place, e.g. bridge.env=deploy/bridge.env.example) and folded into `environment`, which wins, as
// compose does. Prints JSON; a missing variable with `?` or an unreadable file exits 1 with one line.
'use strict';
const { readFileSync } = require('node:fs');
const { dirname, resolve } = require('node:path');
const { parseEnv } = require('node:util');
const { load } = require('js-yaml');

function fail(message) {
  process.stderr.write(`compose-config: ${message}\n`);
  process.exit(1);
}

function readEnvFile(path) {
  try {
    return parseEnv(readFileSync(path, 'utf8'));
  } catch (error) {
    return fail(`cannot read ${path}: ${error.message}`);
  }
}

const VARIABLE = /\$(?:(\$)|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))/g;

function interpolate(text, variables, where) {
  return text.replace(VARIABLE, (_all, dollar, braced, operator, argument, bare) => {
    if (dollar) return '$';
    const name = braced ?? bare;
    const value = variables[name];
    const empty = value === undefined || (operator?.startsWith(':') && value === '');
    if (operator?.endsWith('-')) return empty ? argument : value;
    if (operator?.endsWith('?') && empty) fail(`${where}: ${name}: ${argument || 'required'}`);
    return value ?? '';
  });
}

function interpolateAll(value, variables, where) {
  if (typeof value === 'string') return interpolate(value, variables, where);
  if (Array.isArray(value))
    return value.map((item, index) => interpolateAll(item, variables, `${where}[${index}]`));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, interpolateAll(item, variables, `${where}.${key}`)]),
    );
  }
  return value;
}

function merge(base, override) {
  if (Array.isArray(base) && Array.isArray(override)) return [...base, ...override];
  if (base && override && typeof base === 'object' && typeof override === 'object') {
    const merged = { ...base };
    for (const [key, value] of Object.entries(override))
      merged[key] = key in base ? merge(base[key], value) : value;
    return merged;
  }
  return override;
}

/** `environment` as a map, from either of compose's forms (a map, or a list of NAME=value). */
function environmentMap(environment) {
  if (!environment) return {};
  if (!Array.isArray(environment))
    return Object.fromEntries(Object.entries(environment).map(([k, v]) => [k, String(v ?? '')]));
  return Object.fromEntries(
    environment.map((entry) => [entry.split('=', 1)[0], entry.slice(entry.indexOf('=') + 1)]),
  );
}

function composeConfig(argv, processEnv) {
  const files = [];
  const substitutes = {};
  let variables = processEnv;
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined) fail(`${flag} needs a value`);
    if (flag === '-f') files.push(resolve(value));
    else if (flag === '--env-file') variables = readEnvFile(resolve(value));
    else if (flag === '--env-file-as')
      substitutes[value.split('=', 1)[0]] = resolve(value.slice(value.indexOf('=') + 1));
    else fail(`unknown option ${flag}`);
  }
  if (files.length === 0) fail('no compose file (-f)');
  const project = dirname(files[0]);
  let model = {};
  for (const file of files) {
    let parsed;
    try {
      parsed = load(readFileSync(file, 'utf8'));
    } catch (error) {
      fail(`cannot read ${file}: ${error.message}`);
    }
    model = merge(model, interpolateAll(parsed, variables, file));
  }
  for (const service of Object.values(model.services ?? {})) {
    const fromFiles = [service.env_file ?? []]
      .flat()
      .map((entry) => (typeof entry === 'string' ? entry : entry.path));
    const read = fromFiles.map((name) => readEnvFile(substitutes[name] ?? resolve(project, name)));
    service.environment = Object.assign({}, ...read, environmentMap(service.environment));
    delete service.env_file;
  }
  return model;
}

if (require.main === module) {
  process.stdout.write(`${JSON.stringify(composeConfig(process.argv.slice(2), process.env), null, 2)}\n`);
}
