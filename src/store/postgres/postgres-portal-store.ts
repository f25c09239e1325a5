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
import { PostgresDatabase } from './postgres-database';
import { StatementGroup } from './statement-group';
import { grantValues, SAVE_GRANT } from './postgres-token-store';

/** Portal records and PBX tokens in PostgreSQL, shared by every replica. */
export class PostgresPortalStore extends PortalStore {
  private readonly tokenLooks = new StatementGroup<
    string,
    (PbxTokenRecord & { digest: string; status: PortalStatus }) | undefined
  >((digests) => this.findPbxTokens(digests));

  constructor(private readonly db: PostgresDatabase) {
    super();
  }

  async saveInstall(install: {
    portalId: string;
    domain: string;
    clientEndpoint: string;
    now: number;
    grant: PortalTokens;
  }): Promise<PortalRecord> {
    return this.db.transaction(async (client) => {
      // The portal's row first: it waits for a purge holding it, and a purge after it finds it active.
      const { rows } = await client.query<PortalRow>(
        `INSERT INTO portals AS p (portal_id, domain, client_endpoint, status, installed_at, uninstalled_at, settings, updated_at)
         VALUES ($1, $2, $3, 'active', $4, NULL, '{}', $4)
         ON CONFLICT (portal_id) DO UPDATE SET domain = excluded.domain, client_endpoint = excluded.client_endpoint,
           status = 'active', uninstalled_at = NULL, installed_at = excluded.installed_at,
           updated_at = GREATEST(p.updated_at + 1, excluded.updated_at)
         RETURNING *`,
        [install.portalId, install.domain, install.clientEndpoint, install.now],
      );
      await client.query(SAVE_GRANT, grantValues(install.grant));
      return portalOf(rows[0]);
    });
  }

  async markUninstalled(portalId: string, now: number): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE portals SET status = 'uninstalled', uninstalled_at = $2, updated_at = GREATEST(updated_at + 1, $2)
       WHERE portal_id = $1 RETURNING portal_id`,
      [portalId, now],
    );
    return rows.length === 1;
  }

  async findPortal(portalId: string): Promise<PortalRecord | undefined> {
    const [row] = await this.db.query<PortalRow>('SELECT * FROM portals WHERE portal_id = $1', [portalId]);
    return row && portalOf(row);
  }

  async listPortals(page: { after?: string; limit: number }): Promise<PortalRecord[]> {
    const rows = await this.db.query<PortalRow>(
      'SELECT * FROM portals WHERE portal_id > $1 ORDER BY portal_id LIMIT $2',
      [page.after ?? '', page.limit],
    );
    return rows.map(portalOf);
  }

  async portalVersions(): Promise<Array<{ portalId: string; status: PortalStatus; updatedAt: number }>> {
    const rows = await this.db.query<Pick<PortalRow, 'portal_id' | 'status' | 'updated_at'>>(
      'SELECT portal_id, status, updated_at FROM portals ORDER BY portal_id',
    );
    return rows.map(versionOf);
  }

  async updateSettings(
    portalId: string,
    patch: { [K in keyof PortalOwnSettings]?: PortalOwnSettings[K] | null },
    now: number,
  ): Promise<PortalRecord | undefined> {
    return this.db.transaction(async (client) => {
      const { rows } = await client.query<PortalRow>(
        'SELECT * FROM portals WHERE portal_id = $1 FOR UPDATE',
        [portalId],
      );
      if (!rows[0]) return undefined;
      const settings = mergedSettings(portalOf(rows[0]).settings, patch);
      const updated = await client.query<PortalRow>(
        `UPDATE portals SET settings = $2, updated_at = GREATEST(updated_at + 1, $3) WHERE portal_id = $1 RETURNING *`,
        [portalId, JSON.stringify(settings), now],
      );
      return portalOf(updated.rows[0]);
    });
  }

  async addPbxToken(token: PbxTokenRecord & { digest: string }): Promise<boolean> {
    const rows = await this.db.query(
      `INSERT INTO pbx_tokens (id, portal_id, label, digest, created_at)
       SELECT $1, $2, $3, $4, $5 WHERE EXISTS (SELECT 1 FROM portals WHERE portal_id = $2)
       RETURNING id`,
      [token.id, token.portalId, token.label ?? null, token.digest, token.createdAt],
    );
    return rows.length === 1;
  }

  async revokePbxToken(portalId: string, id: string): Promise<boolean> {
    const rows = await this.db.query('DELETE FROM pbx_tokens WHERE portal_id = $1 AND id = $2 RETURNING id', [
      portalId,
      id,
    ]);
    return rows.length === 1;
  }

  async listPbxTokens(portalId: string): Promise<PbxTokenRecord[]> {
    const rows = await this.db.query<PbxTokenRow>(
      'SELECT * FROM pbx_tokens WHERE portal_id = $1 ORDER BY created_at, id',
      [portalId],
    );
    return rows.map(listedTokenOf);
  }

  /** Every PBX request's token look-up made while one is at the database goes in the next (`StatementGroup`). */
  findPbxToken(
    digest: string,
  ): Promise<(PbxTokenRecord & { digest: string; status: PortalStatus }) | undefined> {
    return this.tokenLooks.run(digest);
  }

  private async findPbxTokens(
    digests: readonly string[],
  ): Promise<((PbxTokenRecord & { digest: string; status: PortalStatus }) | undefined)[]> {
    const rows = await this.db.query<PbxTokenRow & { status: string }>(
      'SELECT t.*, p.status FROM pbx_tokens t JOIN portals p ON p.portal_id = t.portal_id WHERE t.digest = ANY($1::text[])',
      [[...new Set(digests)]],
      'find-pbx-tokens',
    );
    const found = new Map(
      rows.map((row) => [row.digest, { ...tokenOf(row), status: row.status as PortalStatus }]),
    );
    return digests.map((digest) => found.get(digest));
  }

  async purgeUninstalled(before: number): Promise<string[]> {
    const due = await this.db.query<{ portal_id: string }>(
      `SELECT portal_id FROM portals WHERE status = 'uninstalled' AND uninstalled_at < $1 LIMIT 100`,
      [before],
    );
    const deleted: string[] = [];
    for (const { portal_id: portalId } of due) {
      const purged = await this.db.transaction(async (client) => {
        // Locked and re-checked: a portal installed again meanwhile keeps everything; replicas purging
        // together skip each other's portals.
        const gone = await client.query(
          `DELETE FROM portals WHERE portal_id = $1 AND status = 'uninstalled' AND uninstalled_at < $2
           AND portal_id IN (SELECT portal_id FROM portals WHERE portal_id = $1 FOR UPDATE SKIP LOCKED)`,
          [portalId, before],
        );
        if (gone.rowCount !== 1) return false;
        for (const table of [...PORTAL_TABLES, 'portal_budget']) {
          await client.query(`DELETE FROM ${table} WHERE portal_id = $1`, [portalId]);
        }
        return true;
      });
      if (purged) deleted.push(portalId);
    }
    return deleted;
  }
}
