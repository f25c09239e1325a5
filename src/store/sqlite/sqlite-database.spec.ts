import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteDatabase } from './sqlite-database';

/** The group commit's off-thread WAL sync, on a real SQLite file. */
describe('SqliteDatabase.transactionSynced', () => {
  let dir: string;
  let database: SqliteDatabase;
  const path = () => join(dir, 'bridge.sqlite');
  const synchronous = (db: SqliteDatabase) => db.connection.pragma('synchronous', { simple: true });
  const insert = (db: SqliteDatabase, n: number) =>
    db.transactionSynced(() => db.connection.prepare('INSERT INTO synced (n) VALUES (?)').run(n).changes);

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sqlite-synced-'));
    database = new SqliteDatabase(path());
    database.connection.exec('CREATE TABLE synced (n INTEGER PRIMARY KEY)');
  });
  afterEach(() => {
    database.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('resolves each of many commits made at once with its own result, all in the file after a reopen', async () => {
    const results = await Promise.all(Array.from({ length: 50 }, (_, n) => insert(database, n)));
    expect(results).toEqual(Array.from({ length: 50 }, () => 1));
    // Every other transaction of the connection still syncs its own commit.
    expect(synchronous(database)).toBe(2);
    database.close();
    database = new SqliteDatabase(path());
    expect(database.connection.prepare('SELECT COUNT(*) AS rows FROM synced').get()).toEqual({ rows: 50 });
  });

  it('throws what the transaction throws, stores nothing of it and keeps synchronous=FULL', async () => {
    await insert(database, 1);
    expect(() =>
      database.transactionSynced(() =>
        database.connection.prepare('INSERT INTO synced (n) VALUES (1)').run(),
      ),
    ).toThrow(/UNIQUE/);
    expect(() =>
      database.transactionSynced(() => {
        database.connection.prepare('INSERT INTO synced (n) VALUES (2)').run();
        throw new Error('applier failed');
      }),
    ).toThrow('applier failed');
    expect(synchronous(database)).toBe(2);
    expect(database.connection.prepare('SELECT n FROM synced').all()).toEqual([{ n: 1 }]);
  });

  it('closes while syncs are in flight without losing them', async () => {
    const pending = Array.from({ length: 10 }, (_, n) => insert(database, n));
    database.close();
    await expect(Promise.all(pending)).resolves.toHaveLength(10);
    database = new SqliteDatabase(path());
    expect(database.connection.prepare('SELECT COUNT(*) AS rows FROM synced').get()).toEqual({ rows: 10 });
  });

  it('commits in memory without a WAL', async () => {
    const memory = new SqliteDatabase(':memory:');
    memory.connection.exec('CREATE TABLE synced (n INTEGER PRIMARY KEY)');
    await expect(insert(memory, 7)).resolves.toBe(1);
    memory.close();
  });
});
