import { Injectable } from '@nestjs/common';
import { createDialer } from '../dialer/dialer-factory';
import { DialError } from '../dialer/dialer';
import { portalDialSettings } from '../tenancy/portal-dial';

/** How long a "test connection" waits for the PBX. */
const TEST_TIMEOUT_MS = 5000;

/**
 * "Test connection" of the page's dial settings: checked as the admin API checks them, then the dialer they
 * build connects and logs in (no call placed). The reason names the cause, never a credential.
 */
@Injectable()
export class DialTest {
  async test(
    dial: Record<string, string>,
  ): Promise<{ ok: true } | { ok: false; reason: string } | { problems: string[] }> {
    const checked = portalDialSettings(dial, undefined);
    if ('problems' in checked) return { problems: checked.problems };
    const dialer = createDialer(checked.settings, TEST_TIMEOUT_MS);
    if (!dialer) return { ok: false, reason: 'DIAL_MODE: off' };
    try {
      await dialer.checkLogin();
      return { ok: true };
    } catch (error) {
      // DialErrors are written to name the cause without the URL's credentials; anything else is unexpected.
      return {
        ok: false,
        reason: error instanceof DialError ? error.message : 'the PBX could not be reached',
      };
    }
  }
}
