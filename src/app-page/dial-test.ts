import { Injectable } from '@nestjs/common';
import { createDialer } from '../dialer/dialer-factory';
import { DialError } from '../dialer/dialer';
import { portalDialSettings } from '../tenancy/portal-dial';
import { ConnectionOutcome, failureKind, TEST_TIMEOUT_MS, testConnection } from './connection-test';

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
    return testConnection(() => dialer.checkLogin(), {
      secrets: secretsOf(dial),
      // DialErrors are written to name the cause without the URL's credentials; anything else is unexpected.
      describe: (error) =>
        error instanceof DialError
          ? `${failureKind(undefined, error.message)}: ${error.message}`
          : 'failed: the PBX could not be reached',
    });
  }
}

/** The passwords a dial setting holds: in its addresses, and DIAL_AUTH. */
function secretsOf(dial: Record<string, string>): string[] {
  const secrets: string[] = [];
  for (const name of ['AMI_URL', 'ESL_URL', 'DIAL_URL'])
    try {
      const url = new URL(dial[name] ?? '');
      if (url.password) secrets.push(decodeURIComponent(url.password));
    } catch {
      // not an address: nothing to hide in it
    }
  if (dial.DIAL_AUTH) {
    const [scheme, ...rest] = dial.DIAL_AUTH.split(':');
    secrets.push((scheme === 'basic' ? rest.slice(1) : rest).join(':'));
  }
  return secrets;
}
