import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { AppConfig, loadConfig } from './app-config';

/** .env.example at the project root lists every variable AppConfig knows, and the defaults it states are true. */
describe('.env.example', () => {
  const text = readFileSync(join(__dirname, '..', '..', '.env.example'), 'utf8');
  const lines = text.split('\n');
  /** `NAME=value` (a default) or `# NAME=` (optional), with the line before it. */
  const entries = lines.flatMap((line, index) => {
    const match = /^(# )?([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
    return match
      ? [{ name: match[2], optional: Boolean(match[1]), value: match[3], before: lines[index - 1] }]
      : [];
  });
  const known = Object.keys(new AppConfig());

  it('lists every variable of AppConfig once, and no other', () => {
    const listed = entries.map((entry) => entry.name);
    expect(known.filter((name) => !listed.includes(name))).toEqual([]);
    expect(listed.filter((name) => !known.includes(name))).toEqual([]);
    expect(new Set(listed).size).toBe(listed.length);
  });

  it('explains each on the line before it', () => {
    const unexplained = entries.filter(
      (entry) => !/^# \S/.test(entry.before ?? '') || /^# [A-Z0-9_]+=/.test(entry.before),
    );
    expect(unexplained.map((entry) => entry.name)).toEqual([]);
  });

  it('comments out exactly the variables without a default', () => {
    const defaults = new AppConfig() as unknown as Record<string, unknown>;
    const withoutDefault = (name: string) =>
      defaults[name] === undefined ||
      (Array.isArray(defaults[name]) && (defaults[name] as unknown[]).length === 0);
    const wrong = entries.filter(
      (entry) => entry.optional !== withoutDefault(entry.name) || (entry.optional && entry.value),
    );
    expect(wrong.map((entry) => entry.name)).toEqual([]);
  });

  it('states the true defaults: read as an environment, it is the configuration of an empty one', () => {
    expect({ ...loadConfig(parseEnv(text)) }).toEqual({ ...loadConfig({}) });
  });
});
