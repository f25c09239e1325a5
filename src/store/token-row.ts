import { PortalTokens } from './token-store';

/** A `portal_tokens` row as both engines return it (column names are the same in both schemas). */
export interface TokenRow {
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

export function tokensOf(row: TokenRow): PortalTokens {
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
