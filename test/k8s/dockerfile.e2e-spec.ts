import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { load } from 'js-yaml';
import type { IDeployment } from 'kubernetes-models/apps/v1';

const root = resolve(__dirname, '../..');

interface Instruction {
  keyword: string;
  args: string;
}

/** The Dockerfile's instructions, continuation lines joined and comments dropped, split into stages. */
function dockerfileStages(): { preamble: Instruction[]; stages: Instruction[][] } {
  const lines = readFileSync(resolve(root, 'Dockerfile'), 'utf8')
    .split('\n')
    .filter((line) => !/^\s*#/.test(line))
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const instructions = lines.map((line) => {
    const [, keyword, args] = /^(\S+)\s*(.*)$/.exec(line)!;
    return { keyword: keyword.toUpperCase(), args: args.replace(/\s+/g, ' ') };
  });
  const firstFrom = instructions.findIndex((instruction) => instruction.keyword === 'FROM');
  const stages: Instruction[][] = [];
  for (const instruction of instructions.slice(firstFrom)) {
    if (instruction.keyword === 'FROM') stages.push([]);
    stages.at(-1)!.push(instruction);
  }
  return { preamble: instructions.slice(0, firstFrom), stages };
}

function args(stage: Instruction[], keyword: string): string[] {
  return stage
    .filter((instruction) => instruction.keyword === keyword)
    .map((instruction) => instruction.args);
}

describe('Dockerfile', () => {
  const { preamble, stages } = dockerfileStages();
  const runtime = stages.at(-1)!;

  it('takes its base image as a build argument, for every stage', () => {
    expect(args(preamble, 'ARG')).toEqual([expect.stringMatching(/^NODE_IMAGE=node:24[\w.-]*$/)]);
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const stage of stages) expect(stage[0].args).toMatch(/^\$\{NODE_IMAGE\} AS \w+$/);
  });

  it('builds with dev dependencies and ships production dependencies only', () => {
    const build = stages[0].map((instruction) => instruction.args).join('\n');
    expect(build).toMatch(/npm ci\b/);
    expect(build).toMatch(/npm run build/);
    expect(build).toMatch(/npm (prune|ci) [^\n]*--omit=dev/);
    expect(args(runtime, 'RUN').join('\n')).not.toMatch(/npm (ci|install)/);
    expect(args(runtime, 'COPY')).toEqual(
      expect.arrayContaining([expect.stringMatching(/^--from=\w+ \/app\/node_modules /)]),
    );
  });

  it('passes npm only settings it knows: no build-from-source, which npm warns about', () => {
    const build = stages[0].map((instruction) => instruction.args).join('\n');
    expect(build).not.toMatch(/build[_-]from[_-]source/);
    // On Node 24 better-sqlite3 is compiled by node-gyp itself, against the headers the build fetched.
    expect(build).toMatch(
      /npm ci [^\n]*--ignore-scripts[^\n]*node-gyp\.js" rebuild --release --nodedir=\/opt\/node-headers/,
    );
  });

  it('ships no type declarations, source maps or Markdown of the dependencies', () => {
    const build = stages[0].map((instruction) => instruction.args).join('\n');
    for (const pattern of ["'*.d.ts'", "'*.map'", "'*.md'"]) expect(build).toContain(`-name ${pattern}`);
    expect(build).toContain('rm -rf node_modules/@types');
  });

  it('runs as the numeric non-root user the Kubernetes manifests expect', () => {
    const deployment = load(readFileSync(resolve(root, 'k8s/base/deployment.yaml'), 'utf8')) as IDeployment;
    const { runAsUser, runAsGroup } = deployment.spec!.template.spec!.securityContext!;
    expect(args(runtime, 'USER')).toEqual([`${runAsUser}:${runAsGroup}`]);
    expect(runAsUser).toBeGreaterThan(0);
  });

  it('starts node dist/main.js under tini in /app, in production, on port 3000', () => {
    expect(args(runtime, 'ENTRYPOINT')).toEqual([expect.stringMatching(/^\["[^"]*tini", "--"\]$/)]);
    expect(args(runtime, 'CMD')).toEqual(['["node", "dist/main.js"]']);
    expect(args(runtime, 'WORKDIR')).toEqual(['/app']);
    expect(args(runtime, 'ENV')).toContain('NODE_ENV=production');
    // Outside production the bridge listens on 127.0.0.1 only; a container must take outside connections.
    expect(args(runtime, 'ENV')).toContain('HOST=0.0.0.0');
    expect(args(runtime, 'EXPOSE')).toEqual(['3000']);
    expect(args(runtime, 'VOLUME')).toEqual(['["/app/data"]']);
  });

  it('checks its health on /health/live without curl', () => {
    const [healthcheck] = args(runtime, 'HEALTHCHECK');
    expect(healthcheck).toMatch(/CMD \["node", "-e", ".*\/health\/live/);
  });
});

describe('.dockerignore', () => {
  const ignored = readFileSync(resolve(root, '.dockerignore'), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
  const isIgnored = (path: string) =>
    ignored.some((pattern) =>
      new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}(/.*)?$`).test(
        path,
      ),
    );

  it('keeps local state, build output and secrets out of the build context', () => {
    for (const path of ['node_modules', 'dist', 'data', '.git', '.env', 'data/bridge.sqlite', 'deploy']) {
      expect([path, isIgnored(path)]).toEqual([path, true]);
    }
  });

  it('lets in everything the build stage copies', () => {
    const copied = dockerfileStages()
      .stages[0].filter((instruction) => instruction.keyword === 'COPY' && !instruction.args.startsWith('--'))
      .flatMap((instruction) => instruction.args.split(' ').slice(0, -1));
    expect(copied).toEqual(expect.arrayContaining(['package.json', 'package-lock.json', 'src']));
    for (const path of copied) expect([path, isIgnored(path)]).toEqual([path, false]);
  });
});
