import { randomBytes } from 'node:crypto';
import { portalErrors, SandboxPortalError } from './sandbox-portal-error';
import { OAuthAppSeed, WebhookSeed } from './seed';

/** Who a /rest request runs as, and with which permission areas. */
export type Caller =
  | { kind: 'webhook'; userId: number; scopes: string[] }
  | { kind: 'oauth'; userId: number; scopes: string[]; app: OAuthAppSeed };

export interface TokenPair {
  accessToken: string;
  refreshToken: string;
  clientId: string;
  userId: number;
  scopes: string[];
  accessExpiresAt: number;
  refreshExpiresAt: number;
}

interface AuthorizationCode {
  clientId: string;
  redirectUri: string | undefined;
  userId: number;
  expiresAt: number;
}

export const AUTHORIZATION_CODE_TTL_MS = 10 * 60 * 1000;
/** Refresh tokens of real portals live 28 days. */
export const REFRESH_TOKEN_TTL_MS = 28 * 24 * 3600 * 1000;
/** How many used refresh tokens are remembered, to tell a reuse from a stranger's token. */
const USED_REFRESH_TOKENS_KEPT = 10000;

export interface CredentialOptions {
  accessTokenTtlMs: number;
  expiredTokenError: string;
}

const oauthError = (status: number, error: string, description: string) =>
  new SandboxPortalError(status, error, description);
export const oauthErrors = {
  invalidClient: () => oauthError(401, 'invalid_client', 'Invalid client credentials'),
  invalidGrant: (why: string) => oauthError(400, 'invalid_grant', why),
  invalidRequest: (why: string) => oauthError(400, 'invalid_request', why),
  unsupportedGrantType: () => oauthError(400, 'unsupported_grant_type', 'Unsupported grant type'),
};

/** Webhooks, OAuth applications, authorization codes and token pairs of one portal. */
export class CredentialStore {
  private webhooks: WebhookSeed[] = [];
  private apps: OAuthAppSeed[] = [];
  private readonly codes = new Map<string, AuthorizationCode>();
  private readonly byAccessToken = new Map<string, TokenPair>();
  private readonly byRefreshToken = new Map<string, TokenPair>();
  private readonly usedRefreshTokens = new Map<string, true>();

  constructor(private readonly options: CredentialOptions) {}

  /** Replaces webhooks and applications (seed or reset); issued tokens of applications that remain stay valid. */
  load(webhooks: WebhookSeed[], apps: OAuthAppSeed[]): void {
    this.webhooks = webhooks.map((hook) => ({ ...hook, scopes: [...hook.scopes] }));
    this.apps = apps.map((app) => ({ ...app, scopes: [...app.scopes] }));
  }

  addWebhook(hook: WebhookSeed): void {
    this.webhooks = this.webhooks.filter((existing) => existing.code !== hook.code).concat({ ...hook });
  }

  webhookList(): WebhookSeed[] {
    return this.webhooks.map((hook) => ({ ...hook }));
  }

  appList(): OAuthAppSeed[] {
    return this.apps.map((app) => ({ ...app }));
  }

  app(clientId: string): OAuthAppSeed | undefined {
    return this.apps.find((app) => app.clientId === clientId);
  }

  /**
   * Whether this portal issued the refresh token (live or already used) or the authorization code: the
   * central OAuth server asks each portal, as the vendor's knows which portal a token belongs to.
   */
  issued(tokenOrCode: string): boolean {
    return (
      this.byRefreshToken.has(tokenOrCode) ||
      this.usedRefreshTokens.has(tokenOrCode) ||
      this.codes.has(tokenOrCode)
    );
  }

  authenticateWebhook(userId: number, code: string): Caller {
    const hook = this.webhooks.find((candidate) => candidate.code === code && candidate.userId === userId);
    if (!hook) throw portalErrors.invalidCredentials();
    return { kind: 'webhook', userId: hook.userId, scopes: hook.scopes };
  }

  authenticateToken(accessToken: string, now: number): Caller {
    const pair = this.byAccessToken.get(accessToken);
    const app = pair ? this.app(pair.clientId) : undefined;
    if (!pair || !app) throw portalErrors.invalidToken();
    if (now >= pair.accessExpiresAt) throw portalErrors.expiredToken(this.options.expiredTokenError);
    return { kind: 'oauth', userId: pair.userId, scopes: pair.scopes, app };
  }

  issueCode(clientId: string, redirectUri: string | undefined, userId: number, now: number): string {
    const code = randomBytes(35).toString('hex');
    this.codes.set(code, { clientId, redirectUri, userId, expiresAt: now + AUTHORIZATION_CODE_TTL_MS });
    return code;
  }

  exchangeCode(
    app: OAuthAppSeed,
    code: string | undefined,
    redirectUri: string | undefined,
    now: number,
  ): TokenPair {
    const grant = code === undefined ? undefined : this.codes.get(code);
    if (code === undefined || !grant || grant.clientId !== app.clientId) {
      throw oauthErrors.invalidGrant('Invalid authorization code');
    }
    this.codes.delete(code);
    if (now >= grant.expiresAt) throw oauthErrors.invalidGrant('Authorization code has expired');
    if (redirectUri !== undefined && grant.redirectUri !== undefined && redirectUri !== grant.redirectUri) {
      throw oauthErrors.invalidGrant('The redirect URI does not match the one of the authorization request');
    }
    return this.issuePair(app, grant.userId, now);
  }

  /** Refresh tokens are single use: the old pair dies with the refresh. Reuse is reported to the caller. */
  refresh(
    app: OAuthAppSeed,
    refreshToken: string | undefined,
    now: number,
  ): TokenPair | 'reused' | 'invalid' {
    if (refreshToken === undefined) return 'invalid';
    if (this.usedRefreshTokens.has(refreshToken)) return 'reused';
    const pair = this.byRefreshToken.get(refreshToken);
    if (!pair || pair.clientId !== app.clientId || now >= pair.refreshExpiresAt) return 'invalid';
    this.forget(pair);
    this.rememberUsed(refreshToken);
    return this.issuePair(app, pair.userId, now);
  }

  issuePair(app: OAuthAppSeed, userId: number, now: number): TokenPair {
    this.pruneExpired(now);
    const pair: TokenPair = {
      accessToken: randomBytes(35).toString('hex'),
      refreshToken: randomBytes(35).toString('hex'),
      clientId: app.clientId,
      userId,
      scopes: [...app.scopes],
      accessExpiresAt: now + this.options.accessTokenTtlMs,
      refreshExpiresAt: now + REFRESH_TOKEN_TTL_MS,
    };
    this.byAccessToken.set(pair.accessToken, pair);
    this.byRefreshToken.set(pair.refreshToken, pair);
    return pair;
  }

  /** Kills every token and code of the application; returns how many token pairs died. */
  revokeApp(clientId: string): number {
    const pairs = [...this.byAccessToken.values()].filter((pair) => pair.clientId === clientId);
    pairs.forEach((pair) => this.forget(pair));
    for (const [code, grant] of this.codes) if (grant.clientId === clientId) this.codes.delete(code);
    return pairs.length;
  }

  accessTokenTtlSec(): number {
    return Math.round(this.options.accessTokenTtlMs / 1000);
  }

  private forget(pair: TokenPair): void {
    this.byAccessToken.delete(pair.accessToken);
    this.byRefreshToken.delete(pair.refreshToken);
  }

  private rememberUsed(refreshToken: string): void {
    this.usedRefreshTokens.set(refreshToken, true);
    if (this.usedRefreshTokens.size > USED_REFRESH_TOKENS_KEPT) {
      const oldest = this.usedRefreshTokens.keys().next().value;
      if (oldest !== undefined) this.usedRefreshTokens.delete(oldest);
    }
  }

  private pruneExpired(now: number): void {
    for (const pair of this.byRefreshToken.values()) if (now >= pair.refreshExpiresAt) this.forget(pair);
    for (const [code, grant] of this.codes) {
      if (now >= grant.expiresAt + AUTHORIZATION_CODE_TTL_MS) this.codes.delete(code);
    }
  }
}
