/** Where and how to send one REST call; the only thing the portal client knows about authentication. */
export interface PreparedCall {
  url: string;
  headers: Record<string, string>;
}

/**
 * Credentials for one portal, the injection token for the webhook and (later) OAuth implementations.
 * Implementations keep secrets to themselves: a PreparedCall's url may hold a webhook code, so it must
 * never be logged or put in an error.
 */
export abstract class PortalCredentials {
  /** Stable id of the portal the data belongs to (survives restarts). */
  abstract readonly portalId: string;

  /** A description safe to log: no code, no token. */
  abstract readonly displayName: string;

  abstract prepare(method: string): Promise<PreparedCall>;

  /** The portal said the token expired: renew it. Returns whether a retry may succeed. */
  abstract renew(): Promise<boolean>;

  /** The portal answered a redirect: it moved to a new origin; later calls go there. */
  abstract moveTo(origin: string): void;
}
