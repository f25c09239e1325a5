import { Inject, Injectable } from '@nestjs/common';
import { PORTAL_ID } from '../config/portal-id';
import { applicationTokenOf } from './portal-event';
import { PortalEventProcessor } from './portal-event-processor';
import { PortalEventTokens } from './portal-event-tokens';

/**
 * A port: which portal an event post comes from, and who handles it once stored. One portal: the post's
 * application token must be the one expected, and the processor is woken. Many portals (SPEC.md §8): the
 * portal registry finds the portal by `auth[member_id]` and its own application token.
 */
export abstract class PortalEventRouting {
  /** The portal the post's application token belongs to; undefined: refused. */
  abstract portalOf(form: unknown): Promise<string | undefined>;
  /** An event of `portalId` was stored: have it handled. */
  abstract stored(portalId: string): void;
  /** The portal `GET /v1/admin/portal-events` lists (`?portal=`); throws a 400 when it must be named. */
  abstract listed(portal: string | undefined): string;
}

@Injectable()
export class SinglePortalEventRouting extends PortalEventRouting {
  constructor(
    private readonly tokens: PortalEventTokens,
    private readonly processor: PortalEventProcessor,
    @Inject(PORTAL_ID) private readonly portalId: string,
  ) {
    super();
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
