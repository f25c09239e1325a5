import { Inject, Injectable } from '@nestjs/common';
import { OAuthCredentials } from '../auth/oauth-credentials';
import { PORTAL_ID } from '../config/portal-id';
import { PortalCredentials } from '../portal/portal-credentials';
import { PortalEventStore } from '../store/portal-event-store';
import { applicationTokenOf } from './portal-event';
import { PortalEventProcessor } from './portal-event-processor';
import { PortalEventTokens } from './portal-event-tokens';

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

@Injectable()
export class SinglePortalEventRouting extends PortalEventRouting {
  constructor(
    private readonly tokens: PortalEventTokens,
    private readonly processor: PortalEventProcessor,
    @Inject(PORTAL_ID) private readonly portalId: string,
    private readonly credentials: PortalCredentials,
    private readonly store: PortalEventStore,
  ) {
    super();
  }

  /** OAuth mode: the pair needs re-authorisation (a reinstall resumes), as /oauth/events does it. */
  async uninstall(portalId: string): Promise<boolean> {
    if (!(this.credentials instanceof OAuthCredentials)) return false;
    await this.credentials.requireReauthorisation(UNINSTALLED);
    await this.store.publish({ portalId, kind: 'uninstalled' });
    return true;
  }

  async portalOf(form: unknown): Promise<string | undefined> {
    return (await this.tokens.accepts(applicationTokenOf(form))) ? this.portalId : undefined;
  }

  stored(): void {
    this.processor.wake();
  }

  listed(): string {
    return this.portalId;
  }
}
