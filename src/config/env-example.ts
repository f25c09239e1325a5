import { SETTING_DECLARATIONS } from './setting-names';

const HEADER = `# Settings of the bridge (docs/OPERATIONS.md explains each). Copy to .env for a local run: \`node dist/main.js\`
# reads .env in the working directory; a variable set in the environment wins over the file.
# Lines \`NAME=value\` show the default; \`# NAME=\` lines are optional and unset by default.
# Written from src/config/deployment.ts and src/config/portal-settings-schema.ts: change those, then run
# npx ts-node --transpile-only -e "process.stdout.write(require('./src/config/env-example').envExample())" > .env.example
`;

/** A default as the environment would spell it; undefined when the variable is unset by default. */
function spelled(value: unknown): string | undefined {
  if (value === undefined || (Array.isArray(value) && value.length === 0)) return undefined;
  if (typeof value === 'boolean') return value ? '1' : '0';
  return String(value);
}

/** .env.example: every variable under its section, its description above it, its default or `# NAME=`. */
export function envExample(): string {
  const lines = [HEADER.trimEnd()];
  let current: string | undefined;
  for (const [name, declared] of Object.entries(SETTING_DECLARATIONS)) {
    if (declared.section !== current) {
      current = declared.section;
      const scope = declared.scope === 'portal' ? 'portal' : 'deployment';
      lines.push('', `# --- ${current} (${scope}) ---`);
    }
    lines.push(...declared.about.split('\n').map((line) => `# ${line}`));
    const value = spelled(declared.default);
    lines.push(value === undefined ? `# ${name}=` : `${name}=${value}`);
  }
  return `${lines.join('\n')}\n`;
}
