import { IncomingMessage, ServerResponse } from 'node:http';
import { oauthErrors, TokenPair } from './credentials';
import { parseBodyParams, parseFormParams, readBody, sendJson, sendRedirect } from './http-io';
import { Params, stringParam } from './params';
import { PortalState } from './portal-state';
import { SandboxPortalError } from './sandbox-portal-error';
import { OAuthAppSeed } from './seed';

/** The token answer, as `/oauth/token/` and the install post give it. */
export interface TokenAnswer {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  expires: number;
  scope: string;
  domain: string;
  server_endpoint: string;
  client_endpoint: string;
  status: 'L';
  member_id: string;
  user_id: number;
  token_type: 'Bearer';
}

export function tokenAnswer(state: PortalState, pair: TokenPair): TokenAnswer {
  return {
    access_token: pair.accessToken,
    refresh_token: pair.refreshToken,
    expires_in: Math.round((pair.accessExpiresAt - state.now()) / 1000),
    expires: Math.floor(pair.accessExpiresAt / 1000),
    scope: pair.scopes.join(','),
    domain: state.identity.domain,
    server_endpoint: `${state.identity.url}/rest/`,
    client_endpoint: `${state.identity.url}/rest/`,
    status: 'L',
    member_id: state.identity.memberId,
    user_id: pair.userId,
    token_type: 'Bearer',
  };
}

/** The user an authorization runs as unless the browser says otherwise: the portal administrator. */
const AUTHORIZING_USER_ID = 1;
/**
 * Stands in for the portal's login session: a browser sending `Cookie: sandbox_user_id=2` authorizes as
 * employee 2, and the code and tokens it gets are that user's.
 */
export const SANDBOX_USER_COOKIE = 'sandbox_user_id';

/** The portal (among the sandbox's tenants) that issued a refresh token or authorization code, if any. */
export type IssuerLookup = (tokenOrCode: string) => PortalState | undefined;

/**
 * `/oauth/authorize/` (auto-approving, no login page) and `/oauth/token/` of the portal. The root's also
 * stands in for the vendor's central OAuth server: given `issuerOf`, its `/oauth/token/` serves tokens and
 * codes of any tenant portal, answering as the portal that issued them.
 */
export class OAuthServer {
  constructor(
    private readonly state: PortalState,
    private readonly issuerOf?: IssuerLookup,
  ) {}

  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const path = url.pathname.replace(/\/+$/, '');
    try {
      if (path === '/oauth/authorize') {
        return this.authorize(res, parseFormParams(url.search), loggedInUser(req));
      }
      if (path === '/oauth/token') {
        const body = await readBody(req);
        const params = {
          ...parseFormParams(url.search),
          ...parseBodyParams(req.headers['content-type'], body ?? Buffer.alloc(0)),
        };
        return sendJson(res, 200, this.token(params));
      }
      sendJson(res, 404, { error: 'not_found', error_description: 'Unknown OAuth endpoint' });
    } catch (error) {
      if (!(error instanceof SandboxPortalError)) throw error;
      sendJson(res, error.status, error.body());
    }
  }

  private authorize(res: ServerResponse, params: Params, userId: number): void {
    const app = this.state.credentials.app(stringParam(params, 'client_id') ?? '');
    if (!app) throw oauthErrors.invalidClient();
    if (stringParam(params, 'response_type') !== 'code') {
      throw oauthErrors.invalidRequest('response_type must be code');
    }
    const redirectUri = stringParam(params, 'redirect_uri');
    if (!redirectUri || !/^https?:\/\//.test(redirectUri)) {
      throw oauthErrors.invalidRequest('redirect_uri must be an http(s) URL');
    }
    const target = new URL(redirectUri);
    const state = stringParam(params, 'state');
    if (this.state.faults.declineAuthorization()) {
      target.searchParams.set('error', 'access_denied');
      target.searchParams.set('error_description', 'The user denied access to the application');
    } else {
      const { domain, memberId } = this.state.identity;
      target.searchParams.set(
        'code',
        this.state.credentials.issueCode(app.clientId, redirectUri, userId, this.state.now()),
      );
      target.searchParams.set('domain', domain);
      target.searchParams.set('member_id', memberId);
      target.searchParams.set('scope', app.scopes.join(','));
      target.searchParams.set('server_domain', domain);
    }
    if (state !== undefined) target.searchParams.set('state', state);
    sendRedirect(res, 302, target.toString());
  }

  private token(params: Params): TokenAnswer {
    const grantType = stringParam(params, 'grant_type');
    const state = this.portalOf(
      stringParam(params, grantType === 'authorization_code' ? 'code' : 'refresh_token'),
    );
    const app = clientOf(state, params);
    const now = state.now();
    if (grantType === 'authorization_code') {
      const pair = state.credentials.exchangeCode(
        app,
        stringParam(params, 'code'),
        stringParam(params, 'redirect_uri'),
        now,
      );
      state.requestLog.countOAuth('codeExchanges');
      return tokenAnswer(state, pair);
    }
    if (grantType === 'refresh_token') {
      const outcome = state.credentials.refresh(app, stringParam(params, 'refresh_token'), now);
      if (outcome === 'reused') state.requestLog.countOAuth('refreshTokenReuse');
      if (outcome === 'reused' || outcome === 'invalid') {
        throw oauthErrors.invalidGrant('Invalid refresh token');
      }
      state.requestLog.countOAuth('tokenRefreshes');
      return tokenAnswer(state, outcome);
    }
    throw oauthErrors.unsupportedGrantType();
  }

  /** This portal, unless the token or code is a tenant's (a token nobody issued is refused here). */
  private portalOf(tokenOrCode: string | undefined): PortalState {
    if (tokenOrCode === undefined || !this.issuerOf || this.state.credentials.issued(tokenOrCode)) {
      return this.state;
    }
    return this.issuerOf(tokenOrCode) ?? this.state;
  }
}

function clientOf(state: PortalState, params: Params): OAuthAppSeed {
  const app = state.credentials.app(stringParam(params, 'client_id') ?? '');
  if (!app || app.clientSecret !== stringParam(params, 'client_secret')) throw oauthErrors.invalidClient();
  return app;
}

function loggedInUser(req: IncomingMessage): number {
  const match = new RegExp(`(?:^|;\\s*)${SANDBOX_USER_COOKIE}=(\\d+)`).exec(req.headers.cookie ?? '');
  return match ? Number(match[1]) : AUTHORIZING_USER_ID;
}
