import { Injectable } from '@nestjs/common';
import { AmiSession, amiTargetOf } from '../follow/ami/ami-session';
import { EslSession, eslTargetOf } from '../follow/esl/esl-session';
import { CdrSource, cdrTargetOf } from '../follow/ledger/cdr-source';
import { amiLabel } from '../follow/ami/ami-session';
import { eslLabel } from '../follow/esl/esl-session';
import { ConnectionOutcome, TEST_TIMEOUT_MS, testConnection } from './connection-test';

/** The follow settings' addresses a "test connection" tries, each beside its own field. */
export type FollowAddress = 'AMI_URL' | 'ESL_URL' | 'ASTERISK_CDR_URL';

/**
 * "Test connection" of the page's PBX-events settings (already checked as the admin API checks them): the
 * clients the followers use connect and log in, each within TEST_TIMEOUT_MS, and leave: AMI (banner,
 * `Login`, `Logoff`), the event socket (`auth`, `exit`), the CDR ledger (MySQL login, one read of `cdr`).
 * Nothing is followed or stored; a reason names the kind and the address, never a password.
 */
@Injectable()
export class FollowTest {
  async test(follow: Record<string, string>): Promise<Partial<Record<FollowAddress, ConnectionOutcome>>> {
    const results: Partial<Record<FollowAddress, ConnectionOutcome>> = {};
    const tries: Promise<void>[] = [];
    if (follow.PBX_EVENTS === 'ami' && follow.AMI_URL)
      tries.push(this.ami(follow.AMI_URL).then((outcome) => void (results.AMI_URL = outcome)));
    if (follow.PBX_EVENTS === 'esl' && follow.ESL_URL)
      tries.push(this.esl(follow.ESL_URL).then((outcome) => void (results.ESL_URL = outcome)));
    if (follow.ASTERISK_CDR_URL)
      tries.push(
        this.ledger(follow.ASTERISK_CDR_URL).then((outcome) => void (results.ASTERISK_CDR_URL = outcome)),
      );
    await Promise.all(tries);
    return results;
  }

  private ami(url: string): Promise<ConnectionOutcome> {
    const target = amiTargetOf(url);
    return testConnection(
      async () => {
        const session = await AmiSession.open(target, {
          timeoutMs: TEST_TIMEOUT_MS,
          onEvent: () => undefined,
          onClose: () => undefined,
        });
        session.close();
      },
      { what: 'Asterisk Manager Interface', label: amiLabel(target).replace(/^\w+:\/\//, '') },
    );
  }

  private esl(url: string): Promise<ConnectionOutcome> {
    const target = eslTargetOf(url);
    return testConnection(
      async () => {
        const session = await EslSession.open(target, {
          timeoutMs: TEST_TIMEOUT_MS,
          onEvent: () => undefined,
          onClose: () => undefined,
        });
        session.close();
      },
      { what: 'FreeSWITCH event socket', label: eslLabel(target).replace(/^\w+:\/\//, '') },
    );
  }

  private ledger(url: string): Promise<ConnectionOutcome> {
    const { options, label } = cdrTargetOf(url);
    return testConnection(
      async () => {
        const source = new CdrSource(options, TEST_TIMEOUT_MS);
        try {
          await source.check();
        } finally {
          await source.close();
        }
      },
      { what: 'MySQL server', label: label.replace(/^\w+:\/\//, '') },
    );
  }
}
