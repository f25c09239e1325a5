import { Injectable } from '@nestjs/common';
import { EgressPolicy } from '../common/egress';
import { createDialer } from '../dialer/dialer-factory';
import { portalDialSettings } from '../tenancy/portal-dial';
import { ConnectionOutcome, TEST_TIMEOUT_MS, testConnection } from './connection-test';

/**
 * "Test connection" of the page's dial settings: checked as the admin API checks them, then the dialer they
 * build connects and logs in (no call placed), within TEST_TIMEOUT_MS, through the deployment's egress
 * policy (a portal's destination in multi mode is under SPEC §8's rule: refused, it is `not allowed`, and
 * nothing is connected to). The answer is connection-test's: ok, login refused, not allowed or unreachable,
 * never the server's words nor a credential.
 */
@Injectable()
export class DialTest {
  constructor(private readonly egress: EgressPolicy) {}

  async test(dial: Record<string, string>): Promise<ConnectionOutcome | { problems: string[] }> {
    const checked = portalDialSettings(dial, undefined, this.egress);
    if ('problems' in checked) return { problems: checked.problems };
    const dialer = createDialer(checked.settings, this.egress, TEST_TIMEOUT_MS);
    if (!dialer) return { ok: false, reason: 'DIAL_MODE: off' };
    const what =
      checked.settings.mode === 'ami'
        ? 'Asterisk Manager Interface'
        : checked.settings.mode === 'esl'
          ? 'FreeSWITCH event socket'
          : 'dial URL';
    // `ami tls://pbx.example.com:5039` → `pbx.example.com:5039`: no credentials, no path.
    const label = dialer.target.replace(/^\w+ \w+:\/\//, '');
    return testConnection(() => dialer.checkLogin(), { what, label });
  }
}
