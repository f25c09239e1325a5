import { FOR_UPDATE, GREATEST, raw, rowsOf, SKIP_LOCKED, sqlOf, SqlRunner, SqlTag } from './fence';
import {
  PbxTokenRecord,
  PortalInstall,
  PortalOwnSettings,
  PortalRecord,
  PortalStatus,
  PortalStore,
  SettingsPatch,
} from './portal-store';
import { saveGrant } from './sql-token-store';

/** A `portals` row as both engines return it. */
interface PortalRow {
  portal_id: string;
  domain: string;
  client_endpoint: string;
  status: string;
  installed_at: number;
  uninstalled_at: number | null;
  settings: string;
  updated_at: number;
}

export interface PbxTokenRow {
  id: string;
  portal_id: string;
  label: string | null;
  digest: string;
  created_at: number;
}

/** A PBX token found by its digest, with its portal's status. */
export type FoundPbxToken = PbxTokenRecord & { digest: string; status: PortalStatus };

/** Every table keyed by a portal's id: what deleting a portal's data goes through (docs/API.md). */
const PORTAL_TABLES = [
  'call_events',
  'calls',
  'recordings',
  'clicks',
  'dial_requests',
  'portal_events',
  'portal_tokens',
  'oauth_states',
  'portal_leases',
  'pbx_tokens',
  'portal_lines',
] as const;

function portalOf(row: PortalRow): PortalRecord {
  return {
    portalId: row.portal_id,
    domain: row.domain,
    clientEndpoint: row.client_endpoint,
    status: row.status as PortalStatus,
    installedAt: Number(row.installed_at),
    uninstalledAt: row.uninstalled_at === null ? undefined : Number(row.uninstalled_at),
    settings: JSON.parse(row.settings) as PortalOwnSettings,
    updatedAt: Number(row.updated_at),
  };
}

export function tokenOf(row: PbxTokenRow): PbxTokenRecord & { digest: string } {
  return {
    id: row.id,
    portalId: row.portal_id,
    label: row.label ?? undefined,
    createdAt: Number(row.created_at),
    digest: row.digest,
  };
}

/** `patch` over `settings`. */
function mergedSettings(settings: PortalOwnSettings, patch: SettingsPatch): PortalOwnSettings {
  const merged: Record<string, unknown> = { ...settings };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged as PortalOwnSettings;
}

/** Portal records and PBX tokens in either engine's database; each method one short transaction. */
export class SqlPortalStore extends PortalStore {
  private readonly sql: SqlTag;

  /** `ownTables`: the engine's tables keyed by a portal's id beyond those both schemas have. */
  constructor(
    protected readonly db: SqlRunner,
    private readonly ownTables: readonly string[] = [],
  ) {
    super();
    this.sql = sqlOf(db.dialect);
  }

  async saveInstall(install: PortalInstall): Promise<PortalRecord> {
    const { sql, db } = this;
    return db.atomically(function* () {
      // The portal's row first: it waits for a purge holding it, and a purge after it finds it active.
      const [row] = yield* rowsOf<PortalRow>(
        sql`INSERT INTO portals (portal_id, domain, client_endpoint, status, installed_at, uninstalled_at, settings,
           updated_at)
         VALUES (${install.portalId}, ${install.domain}, ${install.clientEndpoint}, 'active', ${install.now}, NULL,
           '{}', ${install.now})
         ON CONFLICT (portal_id) DO UPDATE SET domain = excluded.domain, client_endpoint = excluded.client_endpoint,
           status = 'active', uninstalled_at = NULL, installed_at = excluded.installed_at,
           updated_at = ${GREATEST}(portals.updated_at + 1, excluded.updated_at)
         RETURNING *`,
      );
      yield saveGrant(db.dialect, install.grant);
      return portalOf(row);
    });
  }

  async ensurePortal(portal: {
    portalId: string;
    domain: string;
    clientEndpoint: string;
    now: number;
  }): Promise<PortalRecord> {
    const { sql, db } = this;
    const { portalId, domain, clientEndpoint, now } = portal;
    return db.atomically(function* () {
      yield sql`INSERT INTO portals (portal_id, domain, client_endpoint, status, installed_at, uninstalled_at,
           settings, updated_at)
         VALUES (${portalId}, ${domain}, ${clientEndpoint}, 'active', ${now}, NULL, '{}', ${now})
         ON CONFLICT (portal_id) DO NOTHING`;
      // A version bump only when something changed: replicas starting together rebuild nothing.
      yield sql`UPDATE portals SET domain = ${domain}, client_endpoint = ${clientEndpoint}, status = 'active',
           uninstalled_at = NULL, updated_at = ${GREATEST}(updated_at + 1, ${now})
         WHERE portal_id = ${portalId}
           AND (domain <> ${domain} OR client_endpoint <> ${clientEndpoint} OR status <> 'active')`;
      const [row] = yield* rowsOf<PortalRow>(sql`SELECT * FROM portals WHERE portal_id = ${portalId}`);
      return portalOf(row);
    });
  }

  async markUninstalled(portalId: string, now: number): Promise<boolean> {
    const rows = await this.db.all(
      this.sql`UPDATE portals SET status = 'uninstalled', uninstalled_at = ${now},
         updated_at = ${GREATEST}(updated_at + 1, ${now})
       WHERE portal_id = ${portalId} RETURNING portal_id`,
    );
    return rows.length === 1;
  }

  async findPortal(portalId: string): Promise<PortalRecord | undefined> {
    const [row] = await this.db.all<PortalRow>(this.sql`SELECT * FROM portals WHERE portal_id = ${portalId}`);
    return row && portalOf(row);
  }

  async listPortals(page: { after?: string; limit: number }): Promise<PortalRecord[]> {
    const rows = await this.db.all<PortalRow>(
      this
        .sql`SELECT * FROM portals WHERE portal_id > ${page.after ?? ''} ORDER BY portal_id LIMIT ${page.limit}`,
    );
    return rows.map(portalOf);
  }

  async portalVersions(): Promise<Array<{ portalId: string; status: PortalStatus; updatedAt: number }>> {
    const rows = await this.db.all<Pick<PortalRow, 'portal_id' | 'status' | 'updated_at'>>(
      this.sql`SELECT portal_id, status, updated_at FROM portals ORDER BY portal_id`,
    );
    return rows.map((row) => ({
      portalId: row.portal_id,
      status: row.status as PortalStatus,
      updatedAt: Number(row.updated_at),
    }));
  }

  async updateSettings(
    portalId: string,
    patch: SettingsPatch,
    now: number,
  ): Promise<PortalRecord | undefined> {
    const { sql, db } = this;
    return db.atomically(function* () {
      const [row] = yield* rowsOf<PortalRow>(
        sql`SELECT * FROM portals WHERE portal_id = ${portalId}${FOR_UPDATE}`,
      );
      if (!row) return undefined;
      const settings = mergedSettings(portalOf(row).settings, patch);
      const [updated] = yield* rowsOf<PortalRow>(
        sql`UPDATE portals SET settings = ${JSON.stringify(settings)},
           updated_at = ${GREATEST}(updated_at + 1, ${now})
         WHERE portal_id = ${portalId} RETURNING *`,
      );
      return portalOf(updated);
    });
  }

  async addPbxToken(token: PbxTokenRecord & { digest: string }): Promise<boolean> {
    const rows = await this.db.all(
      this.sql`INSERT INTO pbx_tokens (id, portal_id, label, digest, created_at)
       SELECT ${token.id}, ${token.portalId}, ${token.label}, ${token.digest}, ${token.createdAt}
       WHERE EXISTS (SELECT 1 FROM portals WHERE portal_id = ${token.portalId})
       RETURNING id`,
    );
    return rows.length === 1;
  }

  async revokePbxToken(portalId: string, id: string): Promise<boolean> {
    const rows = await this.db.all(
      this.sql`DELETE FROM pbx_tokens WHERE portal_id = ${portalId} AND id = ${id} RETURNING id`,
    );
    return rows.length === 1;
  }

  async listPbxTokens(portalId: string): Promise<PbxTokenRecord[]> {
    const rows = await this.db.all<PbxTokenRow>(
      this.sql`SELECT * FROM pbx_tokens WHERE portal_id = ${portalId} ORDER BY created_at, id`,
    );
    return rows.map((row) => {
      // What may be listed of a PBX token: everything but its digest.
      const { digest: _digest, ...token } = tokenOf(row);
      return token;
    });
  }

  async findPbxToken(digest: string): Promise<FoundPbxToken | undefined> {
    const [row] = await this.db.all<PbxTokenRow & { status: string }>(
      this.sql`SELECT t.*, p.status FROM pbx_tokens t JOIN portals p ON p.portal_id = t.portal_id
       WHERE t.digest = ${digest}`,
    );
    return row && { ...tokenOf(row), status: row.status as PortalStatus };
  }

  async purgeUninstalled(before: number): Promise<string[]> {
    const { sql, db } = this;
    const due = await db.all<{ portal_id: string }>(
      sql`SELECT portal_id FROM portals WHERE status = 'uninstalled' AND uninstalled_at < ${before} LIMIT 100`,
    );
    const tables = [...PORTAL_TABLES, ...this.ownTables];
    const deleted: string[] = [];
    for (const { portal_id: portalId } of due) {
      const purged = await db.atomically(function* () {
        // Locked and re-checked: a portal installed again meanwhile keeps everything; replicas purging
        // together skip each other's portals.
        const gone = yield* rowsOf(
          sql`DELETE FROM portals WHERE portal_id = ${portalId} AND status = 'uninstalled' AND uninstalled_at < ${before}
             AND portal_id IN (SELECT portal_id FROM portals WHERE portal_id = ${portalId}${SKIP_LOCKED})
           RETURNING portal_id`,
        );
        if (gone.length !== 1) return false;
        for (const table of tables) yield sql`DELETE FROM ${raw(table)} WHERE portal_id = ${portalId}`;
        return true;
      });
      if (purged) deleted.push(portalId);
    }
    return deleted;
  }
}
