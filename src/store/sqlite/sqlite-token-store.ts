import Database from 'better-sqlite3';
import { tokensOf, TokenRow } from '../token-row';
import { PortalTokens, RefreshedPair, TokenStore } from '../token-store';
import { SqliteDatabase } from './sqlite-database';

/** A grant's upsert: also run by a multi-mode install in the transaction that stores the portal's record. */
export const SAVE_GRANT = `INSERT INTO portal_tokens (portal_id, member_id, domain, client_endpoint, access_token, refresh_token,
     access_expires_at, obtained_at, application_token)
   VALUES (@portalId, @memberId, @domain, @clientEndpoint, @accessToken, @refreshToken, @accessExpiresAt,
     @obtainedAt, @applicationToken)
   ON CONFLICT (portal_id) DO UPDATE SET member_id = excluded.member_id, domain = excluded.domain,
     client_endpoint = excluded.client_endpoint, access_token = excluded.access_token,
     refresh_token = excluded.refresh_token, access_expires_at = excluded.access_expires_at,
     obtained_at = excluded.obtained_at,
     application_token = COALESCE(excluded.application_token, portal_tokens.application_token),
     reauthorisation_reason = NULL, refresh_owner = NULL, refresh_lock_until = NULL`;

export function grantParams(tokens: PortalTokens): Record<string, string | number | null> {
  return {
    portalId: tokens.portalId,
    memberId: tokens.memberId,
    domain: tokens.domain,
    clientEndpoint: tokens.clientEndpoint ?? null,
    accessToken: tokens.accessToken,
    refreshToken: tokens.refreshToken,
    accessExpiresAt: tokens.accessExpiresAt,
    obtainedAt: tokens.obtainedAt,
    applicationToken: tokens.applicationToken ?? null,
  };
}

/**
 * Tokens in the bridge's SQLite file. Every statement is one short synchronous transaction: nothing is
 * held open across the HTTP refresh, so intake never waits on the token endpoint.
 */
export class SqliteTokenStore extends TokenStore {
  private readonly db: Database.Database;
  private readonly statements: ReturnType<SqliteTokenStore['prepare']>;

  constructor(database: SqliteDatabase) {
    super();
    this.db = database.connection;
    this.statements = this.prepare();
  }

  private prepare() {
    return {
      find: this.db.prepare('SELECT * FROM portal_tokens WHERE portal_id = ?'),
      saveGrant: this.db.prepare(SAVE_GRANT),
      claim: this.db.prepare(
        `UPDATE portal_tokens SET refresh_owner = @owner, refresh_lock_until = @until
         WHERE portal_id = @portalId AND access_token = @stale AND reauthorisation_reason IS NULL
           AND (refresh_lock_until IS NULL OR refresh_lock_until <= @now)`,
      ),
      commit: this.db.prepare(
        `UPDATE portal_tokens SET access_token = @accessToken, refresh_token = @refreshToken,
           access_expires_at = @accessExpiresAt, obtained_at = @obtainedAt,
           client_endpoint = COALESCE(@clientEndpoint, client_endpoint),
           refresh_owner = NULL, refresh_lock_until = NULL
         WHERE portal_id = @portalId AND refresh_owner = @owner`,
      ),
      release: this.db.prepare(
        'UPDATE portal_tokens SET refresh_owner = NULL, refresh_lock_until = NULL WHERE portal_id = ? AND refresh_owner = ?',
      ),
      requireReauthorisation: this.db.prepare(
        `UPDATE portal_tokens SET reauthorisation_reason = @reason, refresh_owner = NULL, refresh_lock_until = NULL
         WHERE portal_id = @portalId AND (@refreshToken IS NULL OR refresh_token = @refreshToken)`,
      ),
      purgeStates: this.db.prepare('DELETE FROM oauth_states WHERE expires_at <= ?'),
      saveState: this.db.prepare('INSERT INTO oauth_states (state, portal_id, expires_at) VALUES (?, ?, ?)'),
      takeState: this.db.prepare(
        'DELETE FROM oauth_states WHERE state = ? AND portal_id = ? RETURNING expires_at AS expiresAt',
      ),
    };
  }

  async findTokens(portalId: string): Promise<PortalTokens | undefined> {
    const row = this.statements.find.get(portalId) as TokenRow | undefined;
    return row && tokensOf(row);
  }

  async saveGrant(tokens: PortalTokens): Promise<void> {
    this.statements.saveGrant.run(grantParams(tokens));
  }

  async claimRefresh(
    portalId: string,
    staleAccessToken: string,
    owner: string,
    now: number,
    leaseMs: number,
  ): Promise<PortalTokens | undefined> {
    return this.db.transaction(() => {
      const claimed = this.statements.claim.run({
        owner,
        until: now + leaseMs,
        portalId,
        stale: staleAccessToken,
        now,
      });
      if (claimed.changes === 0) return undefined;
      return tokensOf(this.statements.find.get(portalId) as TokenRow);
    })();
  }

  async commitRefresh(portalId: string, owner: string, pair: RefreshedPair): Promise<boolean> {
    const committed = this.statements.commit.run({
      portalId,
      owner,
      accessToken: pair.accessToken,
      refreshToken: pair.refreshToken,
      accessExpiresAt: pair.accessExpiresAt,
      obtainedAt: pair.obtainedAt,
      clientEndpoint: pair.clientEndpoint ?? null,
    });
    return committed.changes === 1;
  }

  async releaseRefresh(portalId: string, owner: string): Promise<void> {
    this.statements.release.run(portalId, owner);
  }

  async requireReauthorisation(portalId: string, reason: string, refreshToken?: string): Promise<void> {
    this.statements.requireReauthorisation.run({ portalId, reason, refreshToken: refreshToken ?? null });
  }

  async saveAuthorisationState(
    state: string,
    portalId: string,
    expiresAt: number,
    now: number,
  ): Promise<void> {
    this.db.transaction(() => {
      this.statements.purgeStates.run(now);
      this.statements.saveState.run(state, portalId, expiresAt);
    })();
  }

  async takeAuthorisationState(state: string, portalId: string, now: number): Promise<boolean> {
    const row = this.statements.takeState.get(state, portalId) as { expiresAt: number } | undefined;
    return row !== undefined && row.expiresAt > now;
  }
}
