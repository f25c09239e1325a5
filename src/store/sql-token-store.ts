import { sql, SqlDialect, SqlRunner, Statement } from './fence';
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
  return sql(
    dialect,
    (
      q,
    ) => `INSERT INTO portal_tokens (portal_id, member_id, domain, client_endpoint, access_token, refresh_token,
       access_expires_at, obtained_at, application_token)
     VALUES (${q.value(tokens.portalId)}, ${q.value(tokens.memberId)}, ${q.value(tokens.domain)},
       ${q.value(tokens.clientEndpoint)}, ${q.value(tokens.accessToken)}, ${q.value(tokens.refreshToken)},
       ${q.value(tokens.accessExpiresAt)}, ${q.value(tokens.obtainedAt)}, ${q.value(tokens.applicationToken)})
     ON CONFLICT (portal_id) DO UPDATE SET member_id = excluded.member_id, domain = excluded.domain,
       client_endpoint = excluded.client_endpoint, access_token = excluded.access_token,
       refresh_token = excluded.refresh_token, access_expires_at = excluded.access_expires_at,
       obtained_at = excluded.obtained_at,
       application_token = COALESCE(excluded.application_token, portal_tokens.application_token),
       reauthorisation_reason = NULL, refresh_owner = NULL, refresh_lock_until = NULL`,
  );
}

/**
 * Tokens in either engine's database. Each method is one statement (its own transaction) but the
 * authorisation states' purge and insert, and nothing is held open across the HTTP refresh: the lease
 * columns make the refresh single-flight across processes and replicas.
 */
export class SqlTokenStore extends TokenStore {
  /**
   * `sharedClock`: the SQL expression of the database's clock, which times the refresh lease where replicas
   * on several machines share the store (they may disagree); without it, the caller's `now` does.
   */
  constructor(
    private readonly db: SqlRunner,
    private readonly sharedClock?: string,
  ) {
    super();
  }

  private get d(): SqlDialect {
    return this.db.dialect;
  }

  async findTokens(portalId: string): Promise<PortalTokens | undefined> {
    const [row] = await this.db.all<TokenRow>(
      sql(this.d, (q) => `SELECT * FROM portal_tokens WHERE portal_id = ${q.value(portalId)}`),
    );
    return row && tokensOf(row);
  }

  async saveGrant(tokens: PortalTokens): Promise<void> {
    await this.db.all(saveGrant(this.d, tokens));
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
      sql(
        this.d,
        (q) => `UPDATE portal_tokens SET refresh_owner = ${q.value(owner)},
           refresh_lock_until = ${q.at(clock)} + ${q.value(leaseMs)}
         WHERE portal_id = ${q.value(portalId)} AND access_token = ${q.value(staleAccessToken)}
           AND reauthorisation_reason IS NULL
           AND (refresh_lock_until IS NULL OR refresh_lock_until <= ${q.at(clock)})
         RETURNING *`,
      ),
    );
    return row && tokensOf(row);
  }

  async commitRefresh(portalId: string, owner: string, pair: RefreshedPair): Promise<boolean> {
    const rows = await this.db.all(
      sql(
        this.d,
        (q) => `UPDATE portal_tokens SET access_token = ${q.value(pair.accessToken)},
           refresh_token = ${q.value(pair.refreshToken)}, access_expires_at = ${q.value(pair.accessExpiresAt)},
           obtained_at = ${q.value(pair.obtainedAt)},
           client_endpoint = COALESCE(${q.value(pair.clientEndpoint)}, client_endpoint),
           refresh_owner = NULL, refresh_lock_until = NULL
         WHERE portal_id = ${q.value(portalId)} AND refresh_owner = ${q.value(owner)}
         RETURNING portal_id`,
      ),
    );
    return rows.length === 1;
  }

  async releaseRefresh(portalId: string, owner: string): Promise<void> {
    await this.db.all(
      sql(
        this.d,
        (q) => `UPDATE portal_tokens SET refresh_owner = NULL, refresh_lock_until = NULL
         WHERE portal_id = ${q.value(portalId)} AND refresh_owner = ${q.value(owner)}`,
      ),
    );
  }

  async requireReauthorisation(portalId: string, reason: string, refreshToken?: string): Promise<void> {
    await this.db.all(
      sql(
        this.d,
        (q) => `UPDATE portal_tokens SET reauthorisation_reason = ${q.value(reason)},
           refresh_owner = NULL, refresh_lock_until = NULL
         WHERE portal_id = ${q.value(portalId)}
           AND (CAST(${q.value(refreshToken)} AS TEXT) IS NULL OR refresh_token = ${q.value(refreshToken)})`,
      ),
    );
  }

  async saveAuthorisationState(
    state: string,
    portalId: string,
    expiresAt: number,
    now: number,
  ): Promise<void> {
    const d = this.d;
    await this.db.atomically(function* () {
      yield sql(d, (q) => `DELETE FROM oauth_states WHERE expires_at <= ${q.value(now)}`);
      yield sql(
        d,
        (q) => `INSERT INTO oauth_states (state, portal_id, expires_at)
         VALUES (${q.value(state)}, ${q.value(portalId)}, ${q.value(expiresAt)})`,
      );
    });
  }

  async takeAuthorisationState(state: string, portalId: string, now: number): Promise<boolean> {
    const [row] = await this.db.all<{ expires_at: number }>(
      sql(
        this.d,
        (q) => `DELETE FROM oauth_states WHERE state = ${q.value(state)} AND portal_id = ${q.value(portalId)}
         RETURNING expires_at`,
      ),
    );
    return row !== undefined && row.expires_at > now;
  }
}
