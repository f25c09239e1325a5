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
/** Statement text → its key (the first words), so the count costs a map look, not a regex, per statement. */
const keys = new Map();
let total = 0;
const query = Client.prototype.query;
Client.prototype.query = function countedQuery(config, ...rest) {
  const text = typeof config === 'string' ? config : config && config.text;
  if (typeof text === 'string') {
    let key = keys.get(text);
    if (key === undefined) {
      key = text.replace(/\s+/g, ' ').trim().slice(0, 90);
      if (keys.size < 10000) keys.set(text, key);
    }
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

// BENCH_CPU_PROFILE_DIR: the process's CPU profile (V8's sampling profiler), written when it is told to stop.
const profileDir = process.env.BENCH_CPU_PROFILE_DIR;
if (profileDir) {
  const inspector = require('node:inspector');
  const session = new inspector.Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 1000 });
  // SIGWINCH starts it (the bench's load begins), the next SIGWINCH writes it (the drain is over).
  let running = false;
  process.on('SIGWINCH', () => {
    if (!running) {
      running = true;
      session.post('Profiler.start');
      return;
    }
    running = false;
    session.post('Profiler.stop', (error, result) => {
      if (!error) writeFileSync(join(profileDir, `${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
