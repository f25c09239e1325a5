/** Form-encoded posts of the portal to the application, read as `express.urlencoded({ extended: true })` gives them. */
export type PortalForm = Record<string, unknown>;

/** What an ONAPPINSTALL post must carry (`auth[…]` fields); every value but the domain is a secret or an id. */
export interface InstallPost {
  accessToken: string;
  refreshToken: string;
  memberId: string;
  domain: string;
  applicationToken: string;
  clientEndpoint?: string;
  /** `auth[expires_in]`, when given. */
  lifetimeSec?: number;
}

const REQUIRED = {
  accessToken: 'access_token',
  refreshToken: 'refresh_token',
  memberId: 'member_id',
  domain: 'domain',
  applicationToken: 'application_token',
} as const;

/** Tokens, ids and the application token as portals issue them: short runs of URL-safe characters. */
const TOKEN_SHAPE = /^[A-Za-z0-9._~-]{1,512}$/;
const DOMAIN_SHAPE = /^[A-Za-z0-9.-]{1,253}(:\d{1,5})?$/;
const MAX_ENDPOINT_LENGTH = 2048;

/**
 * The post's fields, or a description of what is wrong with it (safe to answer: it names fields only).
 * Checked before anything costs a request to the portal.
 */
export function readInstallPost(body: unknown): InstallPost | { problem: string } {
  const form = formOf(body);
  if (formText(form.event)?.toUpperCase() !== 'ONAPPINSTALL') {
    return { problem: 'event must be ONAPPINSTALL' };
  }
  const auth = formOf(form.auth);
  const missing = Object.values(REQUIRED).filter((field) => !formText(auth[field]));
  if (missing.length) return { problem: `missing ${missing.map((field) => `auth[${field}]`).join(', ')}` };
  const malformed: string[] = Object.values(REQUIRED).filter(
    (field) => !(field === 'domain' ? DOMAIN_SHAPE : TOKEN_SHAPE).test(formText(auth[field])!),
  );
  if (auth.client_endpoint !== undefined && !isEndpoint(auth.client_endpoint)) {
    malformed.push('client_endpoint');
  }
  if (malformed.length) {
    return { problem: `malformed ${malformed.map((field) => `auth[${field}]`).join(', ')}` };
  }
  const lifetimeSec = Number(auth.expires_in);
  return {
    accessToken: formText(auth.access_token)!,
    refreshToken: formText(auth.refresh_token)!,
    memberId: formText(auth.member_id)!,
    domain: formText(auth.domain)!,
    applicationToken: formText(auth.application_token)!,
    clientEndpoint: formText(auth.client_endpoint),
    lifetimeSec: Number.isFinite(lifetimeSec) && lifetimeSec > 0 ? lifetimeSec : undefined,
  };
}

export function formOf(value: unknown): PortalForm {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as PortalForm) : {};
}

export function formText(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

function isEndpoint(value: unknown): boolean {
  return (
    typeof value === 'string' &&
    value.length <= MAX_ENDPOINT_LENGTH &&
    /^https?:\/\/[^\s]+$/.test(value.trim())
  );
}
