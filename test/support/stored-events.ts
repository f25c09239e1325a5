import Database from 'better-sqlite3';
import { Client } from 'pg';
import { CallEvent } from '../../src/calls/call';

/** The events intake stored for a call, read straight from the database (SQLite file or PostgreSQL schema). */
export async function storedEvents(databaseUrl: string, callId: string): Promise<CallEvent[]> {
  const sql = 'SELECT payload FROM call_events WHERE call_id = $1 ORDER BY received_at';
  if (databaseUrl.startsWith('sqlite:')) {
    const db = new Database(databaseUrl.slice('sqlite:'.length), { readonly: true });
    try {
      const rows = db.prepare(sql.replace('$1', '?')).all(callId) as { payload: string }[];
      return rows.map((row) => JSON.parse(row.payload) as CallEvent);
    } finally {
      db.close();
    }
  }
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ payload: string }>(sql, [callId]);
    return rows.map((row) => JSON.parse(row.payload) as CallEvent);
  } finally {
    await client.end();
  }
}
