import { RawSql, SqlDialect, sqlOf, SqlRunner, SqlTag, Statement } from './fence';
import { PortalTokens, RefreshedPair, TokenStore } from './token-store';

/** A `portal_tokens` row as both engines return it (column names are the same in both schemas). */
interface TokenRow {
  portal_id: string;
  member_id: string;
  domain: string;
  client_endpoint: string | null;
  access_token: string;
  refresh_token: string;
  access_expires_at: number;
  obtained_at: number;
  application_token: string | null;
  reauthorisation_reason: string | null;
}

function tokensOf(row: TokenRow): PortalTokens {
  return {
    portalId: row.portal_id,
    memberId: row.member_id,
    domain: row.domain,
    clientEndpoint: row.client_endpoint ?? undefined,
    accessToken: row.access_token,
    refreshToken: row.refresh_token,
    accessExpiresAt: row.access_expires_at,
    obtainedAt: row.obtained_at,
    applicationToken: row.application_token ?? undefined,
    reauthorisationReason: row.reauthorisation_reason ?? undefined,
  };
}

/** A grant's upsert: also run by a multi-mode install in the transaction that stores the portal's record. */
export function saveGrant(dialect: SqlDialect, tokens: PortalTokens): Statement {
  return sqlOf(
    dialect,
  )`INSERT INTO portal_tokens (portal_id, member_id, domain, client_endpoint, access_token,
     refresh_token, access_expires_at, obtained_at, application_token)
   VALUES (${tokens.portalId}, ${tokens.memberId}, ${tokens.domain}, ${tokens.clientEndpoint}, ${tokens.accessToken},
     ${tokens.refreshToken}, ${tokens.accessExpiresAt}, ${tokens.obtainedAt}, ${tokens.applicationToken})
   ON CONFLICT (portal_id) DO UPDATE SET member_id = excluded.member_id, domain = excluded.domain,
     client_endpoint = excluded.client_endpoint, access_token = excluded.access_token,
     refresh_token = excluded.refresh_token, access_expires_at = excluded.access_expires_at,
     obtained_at = excluded.obtained_at,
     application_token = COALESCE(excluded.application_token, portal_tokens.application_token),
     reauthorisation_reason = NULL, refresh_owner = NULL, refresh_lock_until = NULL`;
}

/**
 * Tokens in either engine's database. Each method is one statement (its own transaction) but the
 * authorisation states' purge and insert, and nothing is held open across the HTTP refresh: the lease
 * columns make the refresh single-flight across processes and replicas.
 */
export class SqlTokenStore extends TokenStore {
  private readonly sql: SqlTag;

  /**
   * `sharedClock`: the database's clock, which times the refresh lease where replicas on several machines
   * share the store (they may disagree); without it, the caller's `now` does.
   */
  constructor(
    private readonly db: SqlRunner,
    private readonly sharedClock?: RawSql,
  ) {
    super();
    this.sql = sqlOf(db.dialect);
  }

  async findTokens(portalId: string): Promise<PortalTokens | undefined> {
    const [row] = await this.db.all<TokenRow>(
      this.sql`SELECT * FROM portal_tokens WHERE portal_id = ${portalId}`,
    );
    return row && tokensOf(row);
  }

  async saveGrant(tokens: PortalTokens): Promise<void> {
    await this.db.all(saveGrant(this.db.dialect, tokens));
  }

  async claimRefresh(
    portalId: string,
    staleAccessToken: string,
    owner: string,
    now: number,
    leaseMs: number,
  ): Promise<PortalTokens | undefined> {
    const clock = this.sharedClock ?? now;
    const [row] = await this.db.all<TokenRow>(
      this.sql`UPDATE portal_tokens SET refresh_owner = ${owner}, refresh_lock_until = ${clock} + ${leaseMs}
       WHERE portal_id = ${portalId} AND access_token = ${staleAccessToken} AND reauthorisation_reason IS NULL
         AND (refresh_lock_until IS NULL OR refresh_lock_until <= ${clock})
       RETURNING *`,
    );
    return row && tokensOf(row);
  }

  async commitRefresh(portalId: string, owner: string, pair: RefreshedPair): Promise<boolean> {
    const rows = await this.db.all(
      this
        .sql`UPDATE portal_tokens SET access_token = ${pair.accessToken}, refresh_token = ${pair.refreshToken},
         access_expires_at = ${pair.accessExpiresAt}, obtained_at = ${pair.obtainedAt},
         client_endpoint = COALESCE(${pair.clientEndpoint}, client_endpoint),
         refresh_owner = NULL, refresh_lock_until = NULL
       WHERE portal_id = ${portalId} AND refresh_owner = ${owner}
       RETURNING portal_id`,
    );
    return rows.length === 1;
  }

  async releaseRefresh(portalId: string, owner: string): Promise<void> {
    await this.db.all(
      this.sql`UPDATE portal_tokens SET refresh_owner = NULL, refresh_lock_until = NULL
       WHERE portal_id = ${portalId} AND refresh_owner = ${owner}`,
    );
  }

  async requireReauthorisation(portalId: string, reason: string, refreshToken?: string): Promise<void> {
    await this.db.all(
      this.sql`UPDATE portal_tokens SET reauthorisation_reason = ${reason}, refresh_owner = NULL,
         refresh_lock_until = NULL
       WHERE portal_id = ${portalId}
         AND (CAST(${refreshToken} AS TEXT) IS NULL OR refresh_token = ${refreshToken})`,
    );
  }

  async saveAuthorisationState(
    state: string,
    portalId: string,
    expiresAt: number,
    now: number,
  ): Promise<void> {
    const sql = this.sql;
    await this.db.atomically(function* () {
      yield sql`DELETE FROM oauth_states WHERE expires_at <= ${now}`;
      yield sql`INSERT INTO oauth_states (state, portal_id, expires_at) VALUES (${state}, ${portalId}, ${expiresAt})`;
    });
  }

  async takeAuthorisationState(state: string, portalId: string, now: number): Promise<boolean> {
    const [row] = await this.db.all<{ expires_at: number }>(
      this
        .sql`DELETE FROM oauth_states WHERE state = ${state} AND portal_id = ${portalId} RETURNING expires_at`,
    );
    return row !== undefined && row.expires_at > now;
  }
}
