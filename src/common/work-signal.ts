/**
 * A port: whoever stores new work, frees a call or stores new portal credentials tells delivery through it,
 * without importing delivery (intake, the admin API and the OAuth handlers would otherwise depend on the
 * module that depends on them). The delivery module provides it.
 */
export abstract class WorkSignal {
  /** New or freed work may be due (for `portalId`, else every portal): delivery stops sleeping and looks. */
  abstract workAdded(portalId?: string): void;
  /** New credentials were stored (for `portalId`, else every portal): delivery paused for the old ones starts again now. */
  abstract credentialsRenewed(portalId?: string): void;
}
