import { loadConfig } from '../../src/config/app-config';
import { createStores } from '../../src/store/store.module';
import { freePort } from '../support/bridge-process';

/** Start-up against a PostgreSQL server that is not there: a clear error naming the setting, no password. */
describe('PostgreSQL store at start-up', () => {
  it('names DATABASE_URL and never echoes the URL when the database cannot be reached', async () => {
    const port = await freePort();
    const url = `postgres://bridge:s3cret-db-password@127.0.0.1:${port}/bridge`;
    const config = loadConfig({ NODE_ENV: 'test', PBX_TOKENS: 'x', DATABASE_URL: url });
    const failure = await createStores(config).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(failure?.message).toMatch(/^DATABASE_URL: cannot open the PostgreSQL database/);
    expect(failure?.message).not.toContain('s3cret-db-password');
  });
});
