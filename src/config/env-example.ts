import { Scope } from './setting';
import { SETTING_DECLARATIONS } from './setting-names';

const HEADER = `# Settings of the bridge (docs/OPERATIONS.md explains each). Copy to .env for a local run: \`node dist/main.js\`
# reads .env in the working directory; a variable set in the environment wins over the file.
# Lines \`NAME=value\` show the default; \`# NAME=\` lines are optional and unset by default.
# Written from src/config/deployment.ts and src/config/portal-settings-schema.ts: change those, then run
# npx ts-node --transpile-only -e "process.stdout.write(require('./src/config/env-example').envExample())" > .env.example
`;

const SCOPES: Record<Scope, string> = {
  deployment: 'The deployment: the same for every portal',
  portal:
    "A portal's settings: single mode, the portal's; multi mode, the default of a portal that sets none",
};

/** A default as the environment would spell it; undefined when the variable is unset by default. */
function spelled(value: unknown): string | undefined {
  if (value === undefined || (Array.isArray(value) && value.length === 0)) return undefined;
  if (typeof value === 'boolean') return value ? '1' : '0';
  return String(value);
}

/** .env.example: every variable under its section, its description above it, its default or `# NAME=`. */
export function envExample(): string {
  const lines = [HEADER.trimEnd()];
  let scope: string | undefined;
  let current: string | undefined;
  for (const [name, declared] of Object.entries(SETTING_DECLARATIONS)) {
    if (declared.scope !== scope) {
      scope = declared.scope;
      lines.push('', `# ===== ${SCOPES[declared.scope]} =====`);
    }
    if (declared.section !== current) {
      current = declared.section;
      lines.push('', `# --- ${current} ---`);
    }
    lines.push(...declared.about.split('\n').map((line) => `# ${line}`));
    if (declared.refusedInMulti) {
      lines.push(`# (refused with B24_APP_MODE=multi: ${declared.refusedInMulti})`);
    }
    const value = spelled(declared.default);
    lines.push(value === undefined ? `# ${name}=` : `${name}=${value}`);
  }
  return `${lines.join('\n')}\n`;
}
