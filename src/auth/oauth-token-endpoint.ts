import axios, { AxiosInstance } from 'axios';
import { stringify } from 'qs';
import { OAuthSettings } from './oauth-settings';

/** A token answer is a few hundred bytes; anything near this is not one. */
const MAX_TOKEN_ANSWER_BYTES = 64 * 1024;

/** A token answer of `/oauth/token/` (how real portals behave "OAuth"), times on the bridge's clock. */
export interface TokenGrant {
  accessToken: string;
  refreshToken: string;
  accessExpiresAt: number;
  obtainedAt: number;
  memberId?: string;
  domain?: string;
  clientEndpoint?: string;
}

/** The token endpoint refused the grant for good (`invalid_grant`, `invalid_client`): an operator must act. */
export class OAuthRefusal extends Error {
  constructor(
    readonly code: string,
    readonly description: string,
  ) {
    super(`${code}: ${description}`);
    this.name = 'OAuthRefusal';
  }
}

/** The token endpoint could not be asked (network, timeout, 5xx, an answer that makes no sense): try later. */
export class TokenEndpointUnavailable extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'TokenEndpointUnavailable';
  }
}

const REFUSALS = new Set(['invalid_grant', 'invalid_client', 'unauthorized_client']);
/** Used when an answer names no lifetime; the portal's tokens live an hour. */
export const DEFAULT_TOKEN_LIFETIME_SEC = 3600;

interface TokenAnswer {
  access_token?: unknown;
  refresh_token?: unknown;
  expires_in?: unknown;
  expires?: unknown;
  member_id?: unknown;
  domain?: unknown;
  client_endpoint?: unknown;
  error?: unknown;
  error_description?: unknown;
}

/**
 * `{B24_OAUTH_URL}/oauth/token/`: form-encoded POSTs with the client secret. Errors carry only the
 * endpoint's `error` code and description, never the request (it holds the secret and the grant).
 */
export class OAuthTokenEndpoint {
  private readonly http: AxiosInstance;

  constructor(
    private readonly settings: OAuthSettings,
    private readonly now: () => number = Date.now,
  ) {
    this.http = axios.create({
      timeout: settings.timeoutMs,
      maxRedirects: 0,
      maxContentLength: MAX_TOKEN_ANSWER_BYTES,
      validateStatus: () => true,
      transitional: { clarifyTimeoutError: true },
    });
  }

  exchangeCode(code: string, redirectUri: string): Promise<TokenGrant> {
    return this.request({ grant_type: 'authorization_code', code, redirect_uri: redirectUri });
  }

  refresh(refreshToken: string): Promise<TokenGrant> {
    return this.request({ grant_type: 'refresh_token', refresh_token: refreshToken });
  }

  private async request(grant: Record<string, string>): Promise<TokenGrant> {
    const form = stringify({
      ...grant,
      client_id: this.settings.clientId,
      client_secret: this.settings.clientSecret,
    });
    const obtainedAt = this.now();
    let status: number;
    let answer: TokenAnswer;
    try {
      const response = await this.http.post<unknown>(`${this.settings.oauthUrl}/oauth/token/`, form, {
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      });
      status = response.status;
      answer = typeof response.data === 'object' && response.data !== null ? response.data : {};
    } catch (error) {
      const code = axios.isAxiosError(error) ? (error.code ?? 'network error') : 'network error';
      throw new TokenEndpointUnavailable(`the token endpoint did not answer (${code})`);
    }
    if (typeof answer.error === 'string' && answer.error !== '') {
      const description = typeof answer.error_description === 'string' ? answer.error_description : '';
      if (REFUSALS.has(answer.error)) throw new OAuthRefusal(answer.error, description.slice(0, 200));
      throw new TokenEndpointUnavailable(
        `the token endpoint answered HTTP ${status} ${answer.error}: ${description.slice(0, 200)}`,
      );
    }
    if (
      status !== 200 ||
      typeof answer.access_token !== 'string' ||
      typeof answer.refresh_token !== 'string'
    ) {
      throw new TokenEndpointUnavailable(`the token endpoint answered HTTP ${status} without a token pair`);
    }
    return {
      accessToken: answer.access_token,
      refreshToken: answer.refresh_token,
      accessExpiresAt: obtainedAt + lifetimeSec(answer, obtainedAt) * 1000,
      obtainedAt,
      memberId: optionalString(answer.member_id),
      domain: optionalString(answer.domain),
      clientEndpoint: optionalString(answer.client_endpoint),
    };
  }
}

/** `expires_in` is relative, so it holds whatever the clocks of portal and bridge say; `expires` is not. */
function lifetimeSec(answer: TokenAnswer, obtainedAt: number): number {
  const expiresIn = Number(answer.expires_in);
  if (Number.isFinite(expiresIn) && expiresIn > 0) return expiresIn;
  const expires = Number(answer.expires);
  if (Number.isFinite(expires) && expires * 1000 > obtainedAt) return (expires * 1000 - obtainedAt) / 1000;
  return DEFAULT_TOKEN_LIFETIME_SEC;
}

function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
