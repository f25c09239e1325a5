import {
  DialRequest,
  dialRequestOf,
  DialRow,
  dialStatements,
  DialStore,
  FencedDialChange,
  NewDialRequest,
} from '../dial-store';
import { POSTGRES_DIALECT, PostgresDatabase } from './postgres-database';

/**
 * Dial requests in PostgreSQL, shared by every replica, with the statements both engines share
 * (`dialStatements`), timed by the database's clock: a claim skips rows another replica is claiming
 * (`FOR UPDATE SKIP LOCKED`), moves their `due_at` past the lease and gives each a new claim epoch, and every
 * later change names that claim, so a request is worked by one replica at a time and a replica that lost
 * its claim changes nothing.
 */
export class PostgresDialStore extends DialStore {
  constructor(private readonly db: PostgresDatabase) {
    super();
  }

  async add(request: NewDialRequest): Promise<boolean> {
    const { text, values } = dialStatements.add(POSTGRES_DIALECT, request);
    return (await this.db.query(text, values)).length === 1;
  }

  async claim(portalId: string, owner: string, leaseMs: number, limit: number): Promise<DialRequest[]> {
    const stale = dialStatements.settleStale(POSTGRES_DIALECT, portalId);
    await this.db.query(stale.text, stale.values);
    const { text, values } = dialStatements.claim(POSTGRES_DIALECT, portalId, owner, leaseMs, limit);
    return (await this.db.query<DialRow>(text, values)).map(dialRequestOf);
  }

  async update(portalId: string, portalCallId: string, fenced: FencedDialChange): Promise<boolean> {
    const { text, values } = dialStatements.update(POSTGRES_DIALECT, portalId, portalCallId, fenced);
    return (await this.db.query(text, values)).length === 1;
  }

  async find(portalId: string, portalCallId: string): Promise<DialRequest | undefined> {
    const rows = await this.db.query<DialRow>(
      'SELECT * FROM dial_requests WHERE portal_id = $1 AND portal_call_id = $2',
      [portalId, portalCallId],
    );
    return rows[0] && dialRequestOf(rows[0]);
  }

  async nextDueAt(portalId: string): Promise<number | undefined> {
    const { text, values } = dialStatements.nextDueAt(POSTGRES_DIALECT, portalId);
    const rows = await this.db.query<{ due: number | null }>(text, values);
    return rows[0]?.due ?? undefined;
  }

  async deleteSettled(before: number, limit: number): Promise<number> {
    const { text, values } = dialStatements.deleteSettled(POSTGRES_DIALECT, before, limit);
    return (await this.db.query(text, values)).length;
  }
}
