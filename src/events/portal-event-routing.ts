/** Why a portal's delivery is paused after its ONAPPUNINSTALL. */
export const UNINSTALLED = 'the application was uninstalled from the portal (ONAPPUNINSTALL)';

/**
 * A port: which portal an event post comes from, and who handles it once stored. One portal: the post's
 * application token must be the one expected, and the processor is woken. Many portals (docs/API.md): the
 * portal registry finds the portal by `auth[member_id]` and its own application token.
 */
export abstract class PortalEventRouting {
  /** The portal the post's application token belongs to; undefined: refused. */
  abstract portalOf(form: unknown): Promise<string | undefined>;
  /** An event of `portalId` was stored: have it handled. */
  abstract stored(portalId: string): void;
  /**
   * The portal's application was uninstalled (its ONAPPUNINSTALL, token checked): stored, and every
   * replica stops sending to it before this resolves here (the others within a NOTIFY). Says whether
   * anything was paused (webhook mode has no application to uninstall).
   */
  abstract uninstall(portalId: string): Promise<boolean>;
  /** The portal `GET /v1/admin/portal-events` lists (`?portal=`); throws a 400 when it must be named. */
  abstract listed(portal: string | undefined): string;
}
