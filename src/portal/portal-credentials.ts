import type { PortalError } from './portal-error';

/** Where and how to send one REST call; the only thing the portal client knows about authentication. */
export interface PreparedCall {
  url: string;
  headers: Record<string, string>;
}

/**
 * Whether the credentials can be used now, for health details: `awaiting-installation` (OAuth mode, no
 * tokens yet) and `needs-reauthorisation` (the portal refused them) pause delivery until an operator acts.
 */
export interface AuthorisationStatus {
  state: 'authorised' | 'awaiting-installation' | 'needs-reauthorisation';
  /** What an operator must do, when anything; never holds a secret. */
  action?: string;
}

/**
 * Credentials for one portal: the port through which the portal client addresses and authorises a call.
 * The portal folder defines it and the auth folder implements it (webhook or OAuth; AuthModule provides
 * the one configured under this class as the injection token), so the client never imports auth.
 * Implementations keep secrets to themselves: a PreparedCall's url may hold a webhook code and its
 * headers a token, so neither may be logged or put in an error.
 */
export abstract class PortalCredentials {
  /** Stable id of the portal the data belongs to (survives restarts). */
  abstract readonly portalId: string;

  /** A description safe to log: no code, no token. */
  abstract readonly displayName: string;

  /**
   * Addresses one call. Throws a PortalError of kind `credentials`, without anything being sent, when the
   * bridge holds no usable credentials (delivery then pauses; nothing is dropped).
   */
  abstract prepare(method: string): Promise<PreparedCall>;

  /**
   * The portal refused `call` with an expired token or credentials it does not accept: renew them when
   * that can help. Returns whether a retry may succeed.
   */
  abstract renew(refusal: PortalError, call: PreparedCall): Promise<boolean>;

  /** The portal answered a redirect: it moved to a new origin; later calls go there. */
  abstract moveTo(origin: string): void;

  authorisation(): AuthorisationStatus {
    return { state: 'authorised' };
  }
}
