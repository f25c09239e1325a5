import { tokensOf, TokenRow } from '../token-row';
import { PortalTokens, RefreshedPair, TokenStore } from '../token-store';
import { DB_NOW_MS, PostgresDatabase } from './postgres-database';

/** A grant's upsert: also run by a multi-mode install in the transaction that stores the portal's record. */
export const SAVE_GRANT = `INSERT INTO portal_tokens (portal_id, member_id, domain, client_endpoint, access_token, refresh_token,
     access_expires_at, obtained_at, application_token)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
   ON CONFLICT (portal_id) DO UPDATE SET member_id = excluded.member_id, domain = excluded.domain,
     client_endpoint = excluded.client_endpoint, access_token = excluded.access_token,
     refresh_token = excluded.refresh_token, access_expires_at = excluded.access_expires_at,
     obtained_at = excluded.obtained_at,
     application_token = COALESCE(excluded.application_token, portal_tokens.application_token),
     reauthorisation_reason = NULL, refresh_owner = NULL, refresh_lock_until = NULL`;

export function grantValues(tokens: PortalTokens): (string | number | null)[] {
  return [
    tokens.portalId,
    tokens.memberId,
    tokens.domain,
    tokens.clientEndpoint ?? null,
    tokens.accessToken,
    tokens.refreshToken,
    tokens.accessExpiresAt,
    tokens.obtainedAt,
    tokens.applicationToken ?? null,
  ];
}

/**
 * Tokens in PostgreSQL, shared by every replica. Each method is one statement (its own transaction), and
 * nothing is held open across the HTTP refresh: the lease columns make the refresh single-flight across
 * replicas, as in the SQLite store.
 */
export class PostgresTokenStore extends TokenStore {
  constructor(private readonly db: PostgresDatabase) {
    super();
  }

  async findTokens(portalId: string): Promise<PortalTokens | undefined> {
    const rows = await this.db.query<TokenRow>('SELECT * FROM portal_tokens WHERE portal_id = $1', [
      portalId,
    ]);
    return rows[0] && tokensOf(rows[0]);
  }

  async saveGrant(tokens: PortalTokens): Promise<void> {
    await this.db.query(SAVE_GRANT, grantValues(tokens));
  }

  async claimRefresh(
    portalId: string,
    staleAccessToken: string,
    owner: string,
    _now: number,
    leaseMs: number,
  ): Promise<PortalTokens | undefined> {
    // The database's clock, as for the delivery lease: replicas on different machines may disagree.
    const rows = await this.db.query<TokenRow>(
      `UPDATE portal_tokens SET refresh_owner = $1, refresh_lock_until = ${DB_NOW_MS} + $2
       WHERE portal_id = $3 AND access_token = $4 AND reauthorisation_reason IS NULL
         AND (refresh_lock_until IS NULL OR refresh_lock_until <= ${DB_NOW_MS})
       RETURNING *`,
      [owner, leaseMs, portalId, staleAccessToken],
    );
    return rows[0] && tokensOf(rows[0]);
  }

  async commitRefresh(portalId: string, owner: string, pair: RefreshedPair): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE portal_tokens SET access_token = $3, refresh_token = $4, access_expires_at = $5, obtained_at = $6,
         client_endpoint = COALESCE($7, client_endpoint), refresh_owner = NULL, refresh_lock_until = NULL
       WHERE portal_id = $1 AND refresh_owner = $2
       RETURNING portal_id`,
      [
        portalId,
        owner,
        pair.accessToken,
        pair.refreshToken,
        pair.accessExpiresAt,
        pair.obtainedAt,
        pair.clientEndpoint ?? null,
      ],
    );
    return rows.length === 1;
  }

  async releaseRefresh(portalId: string, owner: string): Promise<void> {
    await this.db.query(
      'UPDATE portal_tokens SET refresh_owner = NULL, refresh_lock_until = NULL WHERE portal_id = $1 AND refresh_owner = $2',
      [portalId, owner],
    );
  }

  async requireReauthorisation(portalId: string, reason: string, refreshToken?: string): Promise<void> {
    await this.db.query(
      `UPDATE portal_tokens SET reauthorisation_reason = $2, refresh_owner = NULL, refresh_lock_until = NULL
       WHERE portal_id = $1 AND ($3::text IS NULL OR refresh_token = $3)`,
      [portalId, reason, refreshToken ?? null],
    );
  }

  async saveAuthorisationState(
    state: string,
    portalId: string,
    expiresAt: number,
    now: number,
  ): Promise<void> {
    await this.db.transaction(async (client) => {
      await client.query('DELETE FROM oauth_states WHERE expires_at <= $1', [now]);
      await client.query('INSERT INTO oauth_states (state, portal_id, expires_at) VALUES ($1, $2, $3)', [
        state,
        portalId,
        expiresAt,
      ]);
    });
  }

  async takeAuthorisationState(state: string, portalId: string, now: number): Promise<boolean> {
    const rows = await this.db.query<{ expires_at: number }>(
      'DELETE FROM oauth_states WHERE state = $1 AND portal_id = $2 RETURNING expires_at',
      [state, portalId],
    );
    return rows.length === 1 && rows[0].expires_at > now;
  }
}
