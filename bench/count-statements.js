/**
 * Preloaded into a bridge process by a bench (`--require`, BENCH_STATEMENTS_DIR set): counts the
 * statements it sends to PostgreSQL through `pg`, by the statement's first words, and writes the counts to
 * `$BENCH_STATEMENTS_DIR/<pid>.json` every half second. `readStatementCounts` (process-figures.ts) reads
 * them. Measurement only: a bridge never loads it on its own.
 */
'use strict';
const { writeFileSync, renameSync } = require('node:fs');
const { join } = require('node:path');
const { Client } = require(join(__dirname, '..', 'node_modules', 'pg'));

const dir = process.env.BENCH_STATEMENTS_DIR;
const counts = Object.create(null);
let total = 0;
const query = Client.prototype.query;
Client.prototype.query = function countedQuery(config, ...rest) {
  const text = typeof config === 'string' ? config : config && config.text;
  if (typeof text === 'string') {
    const key = text.replace(/\s+/g, ' ').trim().slice(0, 90);
    counts[key] = (counts[key] || 0) + 1;
    total += 1;
  }
  return query.call(this, config, ...rest);
};
function flush() {
  const file = join(dir, `${process.pid}.json`);
  writeFileSync(`${file}.tmp`, JSON.stringify({ total, counts }));
  renameSync(`${file}.tmp`, file);
}
if (dir) {
  setInterval(flush, 500).unref();
  process.on('exit', flush);
}
