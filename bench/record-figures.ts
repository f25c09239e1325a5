/**
 * Files one bench's printed figures into docs/figures.json, so the figures a document quotes are the ones a
 * run wrote, with the machine, the date, the commit and the command. scripts/bench.sh calls it after each
 * bench: `record-figures.ts <name> <the bench's stdout> <figures file>`. Other benches' entries are kept.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { arch, cpus, loadavg, platform, release, totalmem } from 'node:os';

interface BenchEntry {
  command: string;
  date: string;
  commit: string;
  machine: Record<string, string | number>;
  /** The JSON documents the bench printed, in order. */
  figures: unknown[];
  /** The lines it printed that are not JSON (progress, or a bench that prints its figures as text). */
  lines: string[];
}

interface FiguresFile {
  about: string;
  benches: Record<string, BenchEntry>;
}

const ABOUT =
  'Written by `npm run bench` (scripts/bench.sh, bench/record-figures.ts); never edited by hand. ' +
  'What each figure means and its target: docs/decisions/figures.md.';

/** The top-level JSON documents in `text` (pretty-printed or one a line), and every other line. */
export function splitOutput(text: string): { figures: unknown[]; lines: string[] } {
  const figures: unknown[] = [];
  const lines: string[] = [];
  let pending: string[] = [];
  for (const line of text.split('\n')) {
    if (pending.length === 0 && !/^[{[]/.test(line)) {
      if (line.trim()) lines.push(line);
      continue;
    }
    pending.push(line);
    try {
      figures.push(JSON.parse(pending.join('\n')));
      pending = [];
    } catch {
      // not a whole document yet
    }
  }
  lines.push(...pending.filter((line) => line.trim()));
  return { figures, lines };
}

function machine(): Record<string, string | number> {
  const cores = cpus();
  return {
    os: `${platform()} ${release()} ${arch()}`,
    cpu: cores[0]?.model.trim() ?? 'unknown',
    cores: cores.length,
    memoryGb: Number((totalmem() / 2 ** 30).toFixed(1)),
    loadAverage1m: Number(loadavg()[0].toFixed(2)),
    node: process.version,
  };
}

function commit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      encoding: 'utf8',
    });
    return dirty.trim() ? `${head} (with uncommitted changes)` : head;
  } catch {
    return 'unknown';
  }
}

/** The command that reproduces the run: the bench's own settings from the environment, then the bench. */
function command(name: string): string {
  const settings = Object.entries(process.env)
    .filter(([key]) => /BENCH|^BRIDGE_DIST$/.test(key) && key !== 'BENCH_ONLY')
    .map(([key, value]) => `${key}=${value}`)
    .sort();
  return [...settings, `BENCH_ONLY=${name}`, 'npm run bench'].join(' ');
}

export function recordFigures(name: string, outputFile: string, figuresFile: string): void {
  const file: FiguresFile = existsSync(figuresFile)
    ? (JSON.parse(readFileSync(figuresFile, 'utf8')) as FiguresFile)
    : { about: ABOUT, benches: {} };
  const entry: BenchEntry = {
    command: command(name),
    date: new Date().toISOString(),
    commit: commit(),
    machine: machine(),
    ...splitOutput(readFileSync(outputFile, 'utf8')),
  };
  const benches = { ...file.benches, [name]: entry };
  const sorted = Object.fromEntries(
    Object.keys(benches)
      .sort()
      .map((key) => [key, benches[key]]),
  );
  writeFileSync(figuresFile, `${JSON.stringify({ about: ABOUT, benches: sorted }, null, 2)}\n`);
}

if (require.main === module) {
  const [name, outputFile, figuresFile] = process.argv.slice(2);
  if (!name || !outputFile || !figuresFile) {
    throw new Error('usage: record-figures.ts <bench name> <its output file> <figures file>');
  }
  recordFigures(name, outputFile, figuresFile);
}
