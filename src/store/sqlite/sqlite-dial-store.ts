import Database from 'better-sqlite3';
import {
  DialRequest,
  dialRequestOf,
  DialRow,
  dialStatements,
  DialStore,
  FencedDialChange,
  NewDialRequest,
} from '../dial-store';
import { Statement } from '../fence';
import { SQLITE_DIALECT, SqliteDatabase } from './sqlite-database';

/**
 * Dial requests in the bridge's SQLite file, with the statements both engines share (`dialStatements`);
 * each method one short synchronous transaction, timed by SQLite's clock.
 */
export class SqliteDialStore extends DialStore {
  private readonly db: Database.Database;
  private readonly prepared = new Map<string, Database.Statement>();

  constructor(database: SqliteDatabase) {
    super();
    this.db = database.connection;
  }

  async add(request: NewDialRequest): Promise<boolean> {
    return this.all(dialStatements.add(SQLITE_DIALECT, request)).length === 1;
  }

  async claim(portalId: string, owner: string, leaseMs: number, limit: number): Promise<DialRequest[]> {
    return this.db.transaction(() => {
      this.run(dialStatements.settleStale(SQLITE_DIALECT, portalId));
      const rows = this.all(dialStatements.claim(SQLITE_DIALECT, portalId, owner, leaseMs, limit));
      return (rows as DialRow[]).map(dialRequestOf);
    })();
  }

  async update(portalId: string, portalCallId: string, fenced: FencedDialChange): Promise<boolean> {
    return this.all(dialStatements.update(SQLITE_DIALECT, portalId, portalCallId, fenced)).length === 1;
  }

  async find(portalId: string, portalCallId: string): Promise<DialRequest | undefined> {
    const row = this.statement('SELECT * FROM dial_requests WHERE portal_id = ? AND portal_call_id = ?').get(
      portalId,
      portalCallId,
    ) as DialRow | undefined;
    return row && dialRequestOf(row);
  }

  async nextDueAt(portalId: string): Promise<number | undefined> {
    const [row] = this.all(dialStatements.nextDueAt(SQLITE_DIALECT, portalId)) as { due: number | null }[];
    return row?.due ?? undefined;
  }

  async deleteSettled(before: number, limit: number): Promise<number> {
    return this.all(dialStatements.deleteSettled(SQLITE_DIALECT, before, limit)).length;
  }

  private statement(text: string): Database.Statement {
    let prepared = this.prepared.get(text);
    if (!prepared) {
      prepared = this.db.prepare(text);
      this.prepared.set(text, prepared);
    }
    return prepared;
  }

  private all(statement: Statement): unknown[] {
    return this.statement(statement.text).all(...statement.values);
  }

  private run(statement: Statement): void {
    this.statement(statement.text).run(...statement.values);
  }
}
