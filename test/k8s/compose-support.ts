import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseEnv } from 'node:util';

export const root = resolve(__dirname, '../..');
export const deployDir = resolve(root, 'deploy');

/** A service as `docker compose config` prints it: env_file folded into `environment`. */
export interface ComposeService {
  image?: string;
  build?: { context: string; dockerfile?: string };
  environment: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  restart?: string;
  stop_grace_period?: string;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[]; start_period?: string };
}

export interface ComposeModel {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

/** The deploy/ example env files in place of the operator's copies (bridge.env, postgres.env). */
const EXAMPLES = ['--env-file-as', `bridge.env=${resolve(deployDir, 'bridge.env.example')}`];

/** The compose files rendered by scripts/compose-config.js (a child process), with deploy/'s examples. */
export function renderCompose(files: string[], envFile?: string): ComposeModel {
  const args = [resolve(root, 'scripts/compose-config.js'), ...EXAMPLES];
  if (envFile) args.push('--env-file', resolve(deployDir, envFile));
  for (const file of files) args.push('-f', resolve(deployDir, file));
  return JSON.parse(execFileSync(process.execPath, args, { encoding: 'utf8', env: {} })) as ComposeModel;
}

/** The same render expected to fail: its exit code and its one line. */
export function renderFailure(files: string[]): { status: number | null; stderr: string } {
  const args = [resolve(root, 'scripts/compose-config.js'), ...EXAMPLES];
  for (const file of files) args.push('-f', resolve(deployDir, file));
  const run = spawnSync(process.execPath, args, { encoding: 'utf8', env: {} });
  return { status: run.status, stderr: run.stderr };
}

/** An env file of deploy/ as NAME → value (set lines only). */
export function envFile(name: string): Record<string, string> {
  return parseEnv(readFileSync(resolve(deployDir, name), 'utf8')) as Record<string, string>;
}

/** Every name an env file mentions, set (`NAME=`) or left unset (`# NAME=`). */
export function envFileNames(name: string): string[] {
  const text = readFileSync(resolve(deployDir, name), 'utf8');
  return [...text.matchAll(/^(?:# )?([A-Z][A-Z0-9_]*)=/gm)].map((match) => match[1]);
}

/** "45s", "2m", "1m30s" in seconds. */
export function durationSec(text: string): number {
  let seconds = 0;
  for (const [, amount, unit] of text.matchAll(/(\d+)(h|m|s)/g)) {
    seconds += Number(amount) * { h: 3600, m: 60, s: 1 }[unit as 'h' | 'm' | 's'];
  }
  return seconds;
}
