import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from './app-config';
import { loadEnvironment } from './environment';

/** main.ts's configuration: the environment over an optional `.env`, validated, nothing written back. */
describe('loadEnvironment', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bridge-env-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads .env under the variables the environment sets, and leaves process.env as it was', async () => {
    const file = join(dir, '.env');
    // Jest sets NODE_ENV=test in the environment: it wins over the file.
    writeFileSync(
      file,
      'NODE_ENV=development\nRETENTION_DAYS=7\nPBX_TOKENS=one,two\nUNKNOWN_TO_THE_BRIDGE=x\n',
    );
    const before = { ...process.env };
    const config = await loadEnvironment(file);
    expect(config).toMatchObject({
      RETENTION_DAYS: 7,
      PBX_TOKENS: ['one', 'two'],
    });
    expect(process.env.NODE_ENV).toBe('test');
    expect(config.NODE_ENV).toBe('test');
    expect(Object.isFrozen(config)).toBe(true);
    expect(process.env).toEqual(before);
  });

  it('runs without a .env file', async () => {
    expect((await loadEnvironment(join(dir, 'missing.env'))).RETENTION_DAYS).toBe(30);
  });

  it("fails with loadConfig's message naming the bad variables of the file", async () => {
    const file = join(dir, '.env');
    writeFileSync(file, 'B24_BATCH_SIZE=80\nLOOKUP_DEADLINE_MS=5\n');
    const failure = loadEnvironment(file);
    await expect(failure).rejects.toBeInstanceOf(ConfigError);
    await expect(failure).rejects.toThrow(/B24_BATCH_SIZE: .* \| LOOKUP_DEADLINE_MS/);
  });
});
