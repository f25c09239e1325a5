import { sqlOf, SqlRunner } from './fence';

/**
 * The lines the bridge added to each portal's own list (`telephony.externalLine.add`, docs/API.md "Lines"): one add per
 * line, never one per call, and none again after a restart or on another replica (docs/decisions/lines.md).
 */
export abstract class LineStore {
  /** The numbers added to the portal's list so far. */
  abstract added(portalId: string): Promise<string[]>;
  /** The portal answered the add of `number`: it is on the portal's list. */
  abstract noteAdded(portalId: string, number: string, name: string, now: number): Promise<void>;
}

/** Added lines in either engine's database (on PostgreSQL shared by the replicas). */
export class SqlLineStore extends LineStore {
  constructor(private readonly db: SqlRunner) {
    super();
  }

  async added(portalId: string): Promise<string[]> {
    const rows = await this.db.all<{ number: string }>(
      sqlOf(this.db.dialect)`SELECT number FROM portal_lines WHERE portal_id = ${portalId} ORDER BY number`,
    );
    return rows.map((row) => row.number);
  }

  async noteAdded(portalId: string, number: string, name: string, now: number): Promise<void> {
    await this.db.all(
      sqlOf(this.db.dialect)`INSERT INTO portal_lines (portal_id, number, name, added_at)
           VALUES (${portalId}, ${number}, ${name}, ${now})
           ON CONFLICT (portal_id, number) DO UPDATE SET name = excluded.name, added_at = excluded.added_at`,
    );
  }
}
