/**
 * The OAuth token pair the bridge holds for one portal (the API contract (docs/API.md), OAuth application mode). Tokens and
 * the application token are secrets: nothing here may be logged.
 */
export interface PortalTokens {
  portalId: string;
  memberId: string;
  /** The portal's domain as the portal names it (`portal.example.com`). */
  domain: string;
  /** The REST base the portal told the bridge to call (`https://portal.example.com/rest/`). */
  clientEndpoint?: string;
  accessToken: string;
  refreshToken: string;
  /** When the portal said the access token dies (ms epoch, bridge clock). */
  accessExpiresAt: number;
  /** When this pair was obtained (ms epoch): with the expiry, how long the portal's tokens live. */
  obtainedAt: number;
  /** Sent by the portal with every event to the application; only install posts carry it. */
  applicationToken?: string;
  /** Set when the portal no longer accepts this pair (refresh refused, app removed): why. */
  reauthorisationReason?: string;
}

/** A pair obtained by a refresh. */
export type RefreshedPair = Pick<
  PortalTokens,
  'accessToken' | 'refreshToken' | 'accessExpiresAt' | 'obtainedAt'
> &
  Pick<PortalTokens, 'clientEndpoint'>;

/**
 * Durable OAuth state, the injection token for one implementation per database engine (SQLite,
 * PostgreSQL). Several replicas share one store, so the refresh of a pair is guarded here by a
 * lease with fencing rather than by a transaction held across the HTTP refresh: `claimRefresh` is one
 * atomic conditional update, and `commitRefresh` only lands while its caller still owns the lease.
 */
export abstract class TokenStore {
  abstract findTokens(portalId: string): Promise<PortalTokens | undefined>;

  /**
   * Stores a pair from an install or an authorization code, replacing the earlier one: clears the
   * re-authorisation reason and breaks any refresh lease, so a refresh in flight cannot overwrite it.
   * An absent application token keeps the stored one (the code flow does not carry it).
   */
  abstract saveGrant(tokens: PortalTokens): Promise<void>;

  /**
   * Takes the refresh lease until `now + leaseMs` when the pair is still the one with `staleAccessToken`,
   * usable, and nobody holds an unexpired lease. Returns the pair to refresh, or undefined. A store that
   * replicas on several machines share times the lease by its own clock instead of the caller's `now`.
   */
  abstract claimRefresh(
    portalId: string,
    staleAccessToken: string,
    owner: string,
    now: number,
    leaseMs: number,
  ): Promise<PortalTokens | undefined>;

  /** Stores a refreshed pair and ends the lease, only while `owner` holds it. Returns whether it landed. */
  abstract commitRefresh(portalId: string, owner: string, pair: RefreshedPair): Promise<boolean>;

  /** Ends the lease without a new pair (the refresh failed for a passing reason). */
  abstract releaseRefresh(portalId: string, owner: string): Promise<void>;

  /**
   * Marks the pair as no longer accepted by the portal (and ends any lease). With `refreshToken`, only
   * while that refresh token is still the stored one, so a newer install is never marked.
   */
  abstract requireReauthorisation(portalId: string, reason: string, refreshToken?: string): Promise<void>;

  /** Remembers a `state` of /oauth/start until `expiresAt`, so any replica can check the callback. */
  abstract saveAuthorisationState(
    state: string,
    portalId: string,
    expiresAt: number,
    now: number,
  ): Promise<void>;

  /** Consumes a `state`: true once if it is known and unexpired; an expired or used one is gone. */
  abstract takeAuthorisationState(state: string, portalId: string, now: number): Promise<boolean>;
}
