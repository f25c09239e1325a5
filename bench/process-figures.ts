/**
 * What the many-portal benches read of processes and of PostgreSQL (bench/portals.bench.ts,
 * bench/idle-portals.bench.ts): CPU and RSS from Linux /proc, the database's transaction count, and latency
 * percentiles.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { TEST_POSTGRES_URL } from '../test/support/test-database';
import { percentile } from './bench-support';

/**
 * Sends a bench's signal (SIGWINCH: collect, profile) to a replica without `child.kill`, which marks the
 * child `killed` for any signal: the fleet's teardown then took it for stopped and left it running.
 */
export function signalReplica(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid) process.kill(pid, signal);
}

/** utime + stime of a process, in seconds (Linux /proc). */
export function cpuSeconds(pid: number | undefined): number {
  if (!pid) return 0;
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * CPU seconds of every PostgreSQL process of this machine (the server the bench's replicas share), those
 * that have ended too: a backend that closes (a pool's idle connection, the bench's own readers) takes its
 * time with it, and the postmaster that reaped it counts that time as its children's (cutime, cstime).
 * Without them a window in which backends ended could read negative.
 */
export function postgresCpuSeconds(): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (!stat.includes('(postgres)')) continue;
      const fields = stat.split(') ')[1].split(' ');
      total += (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / 100;
    } catch {
      // the process ended meanwhile
    }
  }
  return total;
}

/**
 * Transactions committed or rolled back in the bench's database so far (pg_stat_database): every statement
 * outside an explicit transaction counts one, an explicit transaction one. The statistics collector
 * reports with a delay of up to a second, which the idle and load windows (seconds) absorb.
 */
export async function databaseTransactions(): Promise<number> {
  const client = new Client({ connectionString: TEST_POSTGRES_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(
      `SELECT (xact_commit + xact_rollback)::text AS n FROM pg_stat_database WHERE datname = current_database()`,
    );
    return Number(rows[0].n);
  } finally {
    await client.end();
  }
}

/** Resident memory of a process, in MB (Linux /proc). */
export function rssMb(pid: number | undefined): number {
  if (!pid) return 0;
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((row) => row.startsWith('VmRSS:'));
  return Number(line?.split(/\s+/)[1] ?? 0) / 1024;
}

/** p50/p95/p99/max of latencies in ms. */
export function figures(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return { samples: 0 };
  return {
    samples: sorted.length,
    p50Ms: Math.round(percentile(sorted, 50)),
    p95Ms: Math.round(percentile(sorted, 95)),
    p99Ms: Math.round(percentile(sorted, 99)),
    maxMs: Math.round(sorted[sorted.length - 1]),
  };
}

/** Statement counts the preload (bench/count-statements.js) wrote for one process: total and by text. */
export interface StatementCounts {
  total: number;
  counts: Record<string, number>;
}

/**
 * The env that makes a bridge process count its statements into `dir` (bench/count-statements.js), with
 * BENCH_CPU_PROFILE_DIR passed on (each replica then profiles itself from one SIGWINCH to the next: the load and the drain).
 */
export function countingStatementsEnv(dir: string): Record<string, string> {
  const profiles = process.env.BENCH_CPU_PROFILE_DIR;
  return {
    BENCH_STATEMENTS_DIR: dir,
    NODE_OPTIONS: `--require ${join(__dirname, 'count-statements.js')}`,
    ...(profiles ? { BENCH_CPU_PROFILE_DIR: profiles } : {}),
  };
}

/** What the preload last wrote for `pid` (zero counts before its first write). */
export function readStatementCounts(dir: string, pid: number | undefined): StatementCounts {
  try {
    return JSON.parse(readFileSync(join(dir, `${pid}.json`), 'utf8')) as StatementCounts;
  } catch {
    return { total: 0, counts: {} };
  }
}

/** `after - before`, by text, largest first (the top `limit`). */
export function statementsBetween(
  before: StatementCounts,
  after: StatementCounts,
  limit = 20,
): { total: number; top: [string, number][] } {
  const top = Object.entries(after.counts)
    .map(([text, n]): [string, number] => [text, n - (before.counts[text] ?? 0)])
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit);
  return { total: after.total - before.total, top };
}
