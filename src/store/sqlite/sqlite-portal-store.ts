import Database from 'better-sqlite3';
import {
  listedTokenOf,
  mergedSettings,
  PbxTokenRow,
  PORTAL_TABLES,
  portalOf,
  PortalRow,
  tokenOf,
  versionOf,
} from '../portal-row';
import { PbxTokenRecord, PortalOwnSettings, PortalRecord, PortalStatus, PortalStore } from '../portal-store';
import { PortalTokens } from '../token-store';
import { SqliteDatabase } from './sqlite-database';
import { grantParams, SAVE_GRANT } from './sqlite-token-store';

/** Portal records and PBX tokens in the bridge's SQLite file; each method one short synchronous transaction. */
export class SqlitePortalStore extends PortalStore {
  private readonly db: Database.Database;

  constructor(database: SqliteDatabase) {
    super();
    this.db = database.connection;
  }

  async saveInstall(install: {
    portalId: string;
    domain: string;
    clientEndpoint: string;
    now: number;
    grant: PortalTokens;
  }): Promise<PortalRecord> {
    const { grant, ...portal } = install;
    return this.db.transaction(() => {
      const row = this.db
        .prepare(
          `INSERT INTO portals (portal_id, domain, client_endpoint, status, installed_at, uninstalled_at, settings, updated_at)
           VALUES (@portalId, @domain, @clientEndpoint, 'active', @now, NULL, '{}', @now)
           ON CONFLICT (portal_id) DO UPDATE SET domain = excluded.domain, client_endpoint = excluded.client_endpoint,
             status = 'active', uninstalled_at = NULL, installed_at = excluded.installed_at,
             updated_at = MAX(portals.updated_at + 1, excluded.updated_at)
           RETURNING *`,
        )
        .get(portal) as PortalRow;
      this.db.prepare(SAVE_GRANT).run(grantParams(grant));
      return portalOf(row);
    })();
  }

  async markUninstalled(portalId: string, now: number): Promise<boolean> {
    const result = this.db
      .prepare(
        `UPDATE portals SET status = 'uninstalled', uninstalled_at = @now, updated_at = MAX(updated_at + 1, @now)
         WHERE portal_id = @portalId`,
      )
      .run({ portalId, now });
    return result.changes === 1;
  }

  async findPortal(portalId: string): Promise<PortalRecord | undefined> {
    const row = this.db.prepare('SELECT * FROM portals WHERE portal_id = ?').get(portalId) as
      PortalRow | undefined;
    return row && portalOf(row);
  }

  async listPortals(page: { after?: string; limit: number }): Promise<PortalRecord[]> {
    const rows = this.db
      .prepare('SELECT * FROM portals WHERE portal_id > ? ORDER BY portal_id LIMIT ?')
      .all(page.after ?? '', page.limit) as PortalRow[];
    return rows.map(portalOf);
  }

  async portalVersions(): Promise<Array<{ portalId: string; status: PortalStatus; updatedAt: number }>> {
    const rows = this.db
      .prepare('SELECT portal_id, status, updated_at FROM portals ORDER BY portal_id')
      .all() as Pick<PortalRow, 'portal_id' | 'status' | 'updated_at'>[];
    return rows.map(versionOf);
  }

  async updateSettings(
    portalId: string,
    patch: { [K in keyof PortalOwnSettings]?: PortalOwnSettings[K] | null },
    now: number,
  ): Promise<PortalRecord | undefined> {
    return this.db.transaction(() => {
      const row = this.db.prepare('SELECT * FROM portals WHERE portal_id = ?').get(portalId) as
        PortalRow | undefined;
      if (!row) return undefined;
      const settings = mergedSettings(portalOf(row).settings, patch);
      const updated = this.db
        .prepare(
          `UPDATE portals SET settings = ?, updated_at = MAX(updated_at + 1, ?) WHERE portal_id = ? RETURNING *`,
        )
        .get(JSON.stringify(settings), now, portalId) as PortalRow;
      return portalOf(updated);
    })();
  }

  async addPbxToken(token: PbxTokenRecord & { digest: string }): Promise<boolean> {
    const result = this.db
      .prepare(
        `INSERT INTO pbx_tokens (id, portal_id, label, digest, created_at)
         SELECT @id, @portalId, @label, @digest, @createdAt WHERE EXISTS (SELECT 1 FROM portals WHERE portal_id = @portalId)`,
      )
      .run({ ...token, label: token.label ?? null });
    return result.changes === 1;
  }

  async revokePbxToken(portalId: string, id: string): Promise<boolean> {
    return (
      this.db.prepare('DELETE FROM pbx_tokens WHERE portal_id = ? AND id = ?').run(portalId, id).changes === 1
    );
  }

  async listPbxTokens(portalId: string): Promise<PbxTokenRecord[]> {
    const rows = this.db
      .prepare('SELECT * FROM pbx_tokens WHERE portal_id = ? ORDER BY created_at, id')
      .all(portalId) as PbxTokenRow[];
    return rows.map(listedTokenOf);
  }

  async findPbxToken(
    digest: string,
  ): Promise<(PbxTokenRecord & { digest: string; status: PortalStatus }) | undefined> {
    const row = this.db
      .prepare(
        `SELECT t.*, p.status FROM pbx_tokens t JOIN portals p ON p.portal_id = t.portal_id WHERE t.digest = ?`,
      )
      .get(digest) as (PbxTokenRow & { status: string }) | undefined;
    return row && { ...tokenOf(row), status: row.status as PortalStatus };
  }

  async purgeUninstalled(before: number): Promise<string[]> {
    const due = this.db
      .prepare(`SELECT portal_id FROM portals WHERE status = 'uninstalled' AND uninstalled_at < ? LIMIT 100`)
      .all(before) as { portal_id: string }[];
    const deleted: string[] = [];
    for (const { portal_id: portalId } of due) {
      const purged = this.db.transaction(() => {
        // Re-checked in the transaction: a portal installed again meanwhile keeps everything.
        const gone = this.db
          .prepare(
            `DELETE FROM portals WHERE portal_id = ? AND status = 'uninstalled' AND uninstalled_at < ?`,
          )
          .run(portalId, before);
        if (gone.changes !== 1) return false;
        for (const table of PORTAL_TABLES) {
          this.db.prepare(`DELETE FROM ${table} WHERE portal_id = ?`).run(portalId);
        }
        return true;
      })();
      if (purged) deleted.push(portalId);
    }
    return deleted;
  }
}
