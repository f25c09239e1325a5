import Database from 'better-sqlite3';
import { Client } from 'pg';

/** How many calls and call events the store holds, read beside the bridge from its own database. */
export interface StoreCounts {
  calls: number;
  events: number;
}

export interface StoreCounter {
  read(): Promise<StoreCounts>;
  close(): Promise<void>;
}

const COUNTS = 'SELECT (SELECT COUNT(*) FROM calls) AS calls, (SELECT COUNT(*) FROM call_events) AS events';

/** Opens the bridge's database (`sqlite:PATH` or `postgres://…`, as DATABASE_URL names it) to count rows. */
export async function openStoreCounter(databaseUrl: string): Promise<StoreCounter> {
  if (databaseUrl.startsWith('sqlite:')) {
    const db = new Database(databaseUrl.slice('sqlite:'.length), { readonly: true, fileMustExist: true });
    const statement = db.prepare(COUNTS);
    return {
      read: async () => statement.get() as StoreCounts,
      close: async () => {
        db.close();
      },
    };
  }
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  return {
    read: async () => {
      const { rows } = await client.query<{ calls: string; events: string }>(COUNTS);
      return { calls: Number(rows[0].calls), events: Number(rows[0].events) };
    },
    close: () => client.end(),
  };
}
