/**
 * A port: with many portals (`B24_APP_MODE=multi`, the API contract (docs/API.md)) installs and portal events are taken by the
 * portal registry (src/tenancy/), which provides this; the OAuth endpoints hand the posts over unchanged.
 */
export abstract class PortalInstalls {
  /**
   * A portal's ONAPPINSTALL post, checked with the vendor's OAuth server before anything is stored;
   * `source` is the poster's address, whose share of those checks is limited.
   */
  abstract install(
    body: unknown,
    source: string,
  ): Promise<{ portalId: string; domain: string; unchanged?: boolean }>;

  /** A later event of an installed portal (ONAPPUNINSTALL), accepted only with that portal's application token. */
  abstract portalEvent(body: unknown): Promise<{ event: string; handled: boolean }>;
}
