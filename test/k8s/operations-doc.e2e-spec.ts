import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { AppConfig } from '../../src/config/app-config';

const operations = readFileSync(resolve(__dirname, '../../docs/OPERATIONS.md'), 'utf8');
const settingsSection = operations.slice(
  operations.indexOf('## Settings'),
  operations.indexOf('## Building'),
);
const buildScript = readFileSync(resolve(__dirname, '../../scripts/build-image.sh'), 'utf8');

describe('docs/OPERATIONS.md', () => {
  it('documents every setting of AppConfig in a table row of its own', () => {
    const documented = [...settingsSection.matchAll(/^\| `([A-Z0-9_]+)` \|/gm)].map((match) => match[1]);
    expect(Object.keys(new AppConfig()).filter((name) => !documented.includes(name))).toEqual([]);
    expect(documented.filter((name) => !(name in new AppConfig()))).toEqual([]);
  });

  it('shows the buildah build the script runs', () => {
    const documented = /buildah bud [^\\\n]+/.exec(operations)![0].trim();
    expect(documented).toBe('buildah bud --isolation chroot --format docker');
    expect(buildScript).toContain(documented);
  });
});
