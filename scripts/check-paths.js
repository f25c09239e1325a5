#!/usr/bin/env node
// npm run lint: every repository path that README.md, docs/**/*.md or a comment in src/, test/, bench/ or
// sandbox/ names must exist, so a moved file cannot leave a document pointing at nothing. A path is one that
// starts with a top-level folder below (`src/store/`, `docs/API.md`, `test/follow/ami-clock.e2e-spec.ts:40`);
// it may omit its extension (any). Globs and placeholders (`test/*.e2e-spec.ts`, `bench/<name>.bench.ts`) are skipped.
// In Markdown, relative link targets (`[tenancy](decisions/tenancy.md)`) must exist too, read from the file's folder.
'use strict';
const { existsSync, readdirSync, readFileSync, statSync } = require('node:fs');
const { basename, dirname, join, relative } = require('node:path');

const ROOT = join(__dirname, '..');
const FOLDERS = ['src', 'test', 'docs', 'bench', 'scripts', 'k8s', 'sandbox', 'deploy'];
const CODE_FOLDERS = ['src', 'test', 'bench', 'sandbox'];
// A folder name at the start of a word (not inside a URL or another path), then path characters.
const PATH = new RegExp(`(?<![\\w./@~-])((?:${FOLDERS.join('|')})/[\\w./*<>{}…-]*)`, 'g');

function files(dir, keep) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...files(path, keep));
    else if (keep(entry.name)) found.push(path);
  }
  return found;
}

/** The comments of a TypeScript or JavaScript source, with the strings skipped; other text becomes spaces. */
function comments(source) {
  let out = '';
  let i = 0;
  while (i < source.length) {
    const two = source.slice(i, i + 2);
    if (two === '//' || two === '/*') {
      const end = two === '//' ? source.indexOf('\n', i) : source.indexOf('*/', i + 2);
      const stop = end === -1 ? source.length : end;
      out += ` ${source.slice(i + 2, stop)} `;
      i = stop + 2;
    } else if (`'"\``.includes(source[i])) {
      const quote = source[i++];
      while (i < source.length && source[i] !== quote && (quote === '`' || source[i] !== '\n')) {
        i += source[i] === '\\' ? 2 : 1;
      }
      i++;
      out += ' ';
    } else {
      out += source[i] === '\n' ? '\n' : ' ';
      i++;
    }
  }
  return out;
}

/** The path as named, or a file of that name with any extension (`test/logs/shutdown` → `shutdown.e2e-spec.ts`). */
function exists(path) {
  const full = join(ROOT, path);
  if (existsSync(full)) return true;
  const folder = dirname(full);
  const name = `${basename(full)}.`;
  return (
    existsSync(folder) &&
    statSync(folder).isDirectory() &&
    readdirSync(folder).some((entry) => entry.startsWith(name))
  );
}

/** A Markdown link's target that names a file of this repository: not a URL, an anchor or an address. */
const LINK = /\]\(([^()\s]+)\)/g;

function missingIn(file, text) {
  const missing = [];
  text.split('\n').forEach((line, index) => {
    const where = `${relative(ROOT, file)}:${index + 1}`;
    for (const match of line.matchAll(PATH)) {
      const path = match[1].replace(/[.]+$/, '');
      if (/[*<>{}…]/.test(path) || path.endsWith('/.')) continue;
      if (!exists(path)) missing.push(`${where}: ${path}`);
    }
    if (!file.endsWith('.md')) return;
    for (const match of line.matchAll(LINK)) {
      const target = match[1].split('#')[0];
      if (!target || /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('/')) continue;
      const path = relative(ROOT, join(dirname(file), target));
      if (!exists(path)) missing.push(`${where}: ${target}`);
    }
  });
  return missing;
}

const docs = [join(ROOT, 'README.md'), ...files(join(ROOT, 'docs'), (name) => name.endsWith('.md'))];
const code = CODE_FOLDERS.filter((folder) => existsSync(join(ROOT, folder))).flatMap((folder) =>
  files(join(ROOT, folder), (name) => /\.(ts|js)$/.test(name)),
);
const missing = [
  ...docs.flatMap((file) => missingIn(file, readFileSync(file, 'utf8'))),
  ...code.flatMap((file) => missingIn(file, comments(readFileSync(file, 'utf8')))),
];
if (missing.length > 0) {
  console.error(`check-paths: ${missing.length} path(s) named but not in the repository:`);
  for (const line of missing) console.error(`  ${line}`);
  process.exit(1);
}
