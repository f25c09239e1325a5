'use strict';
/**
 * Preloaded by scripts/test-node24.sh (NODE_OPTIONS=--require, so Jest's workers get it too): Node 24 loads
 * better-sqlite3's addon from NODE24_SQLITE_ADDON, a copy built for its ABI, instead of the one in
 * node_modules, which npm built for the Node that installed it (20) and which Node 24 refuses to open.
 * Swapping the file at process.dlopen, where every .node file is opened, leaves node_modules and the
 * store's code untouched, so Node 20 runs beside this one keep working.
 */
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const addon = process.env.NODE24_SQLITE_ADDON;
if (!addon || !existsSync(addon)) {
  throw new Error(`node24-addon: NODE24_SQLITE_ADDON must name a built better_sqlite3.node (got ${addon})`);
}
const installed = join('better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
const dlopen = process.dlopen;
process.dlopen = function dlopenNode24Build(module, filename, ...rest) {
  return dlopen.call(this, module, filename.endsWith(installed) ? addon : filename, ...rest);
};
