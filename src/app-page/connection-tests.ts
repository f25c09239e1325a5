import { Injectable, Logger } from '@nestjs/common';
import { KeyedBuckets } from '../auth/portal-post-limits';
import { DialTest } from './dial-test';
import { FollowTest } from './follow-test';

/**
 * "Test connection", each a login at the portal's PBX: 10, then one every 6 s (10 a minute), per portal,
 * shared by the settings forms and the guided setup (one budget however the page is used). A test the
 * settings' own check refuses before any login is not counted.
 */
const TESTS_BURST = 10;
const TESTS_REFILL_MS = 6_000;
const PORTALS_KEPT = 10_000;

/** The page's connection tests (dial and PBX events) and their one limit per portal. */
@Injectable()
export class ConnectionTests {
  private readonly logger = new Logger('AppPage');
  private readonly portals = new KeyedBuckets(TESTS_BURST, TESTS_REFILL_MS, PORTALS_KEPT);

  constructor(
    readonly dial: DialTest,
    readonly follow: FollowTest,
  ) {}

  /** 0 when a test of the portal may go now; else the seconds until one may (the refusal is logged). */
  admit(portalId: string): number {
    const waitSec = this.portals.of(portalId).take();
    if (waitSec > 0) this.logger.warn(`app page: too many connection tests for portal ${portalId}; refused`);
    return waitSec;
  }
}
