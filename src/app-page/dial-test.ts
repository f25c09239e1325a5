import { Injectable } from '@nestjs/common';
import { createDialer } from '../dialer/dialer-factory';
import { portalDialSettings } from '../tenancy/portal-dial';
import { dialView } from '../tenancy/portal-dial';
import { ConnectionOutcome, TEST_TIMEOUT_MS, testConnection } from './connection-test';

/**
 * "Test connection" of the page's dial settings: checked as the admin API checks them, then the dialer they
 * build connects and logs in (no call placed), within TEST_TIMEOUT_MS. The reason names the cause, never a
 * credential.
 */
@Injectable()
export class DialTest {
  async test(dial: Record<string, string>): Promise<ConnectionOutcome | { problems: string[] }> {
    const checked = portalDialSettings(dial, undefined);
    if ('problems' in checked) return { problems: checked.problems };
    const dialer = createDialer(checked.settings, TEST_TIMEOUT_MS);
    if (!dialer) return { ok: false, reason: 'DIAL_MODE: off' };
    const what =
      checked.settings.mode === 'ami'
        ? 'Asterisk Manager Interface'
        : checked.settings.mode === 'esl'
          ? 'FreeSWITCH event socket'
          : 'dial URL';
    const label = dialView(dial)?.target.replace(/^\w+:\/\//, '') ?? '';
    return testConnection(() => dialer.checkLogin(), { what, label });
  }
}
