import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { AppConfig, loadConfig } from './app-config';
import { envExample } from './env-example';

/** .env.example at the project root is written from the declarations, and the defaults it states are true. */
describe('.env.example', () => {
  const text = readFileSync(join(__dirname, '..', '..', '.env.example'), 'utf8');

  it('is what the declarations say (its header tells how to write it again)', () => {
    expect(text).toBe(envExample());
  });

  it('lists every variable of AppConfig once, each explained on the line before it', () => {
    const lines = text.split('\n');
    const listed = lines.flatMap((line, index) => {
      const match = /^(?:# )?([A-Z][A-Z0-9_]*)=/.exec(line);
      const before = lines[index - 1] ?? '';
      return match && /^# \S/.test(before) && !/^# [A-Z0-9_]+=/.test(before) ? [match[1]] : [];
    });
    expect(listed).toEqual(Object.keys(new AppConfig()));
  });

  it('states the true defaults: read as an environment, it is the configuration of an empty one', () => {
    expect({ ...loadConfig(parseEnv(text)) }).toEqual({ ...loadConfig({}) });
  });
});
