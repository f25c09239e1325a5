import { Injectable } from '@nestjs/common';
import { AmiError, AmiSession, amiTargetOf } from '../follow/ami/ami-session';
import { EslError, EslSession, eslTargetOf } from '../follow/esl/esl-session';
import { CdrSource, cdrTargetOf } from '../follow/ledger/cdr-source';
import { ConnectionOutcome, failureKind, TEST_TIMEOUT_MS, testConnection } from './connection-test';

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
      { secrets: [target.secret], describe: (error) => described(error, AmiError) },
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
      { secrets: [target.password], describe: (error) => described(error, EslError) },
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
      {
        secrets: [options.password],
        describe: (error) => {
          // mysql2's errors carry a code and the server's words (user and host, never the password).
          const { code, message } = error as { code?: string; message?: string };
          const words = (message ?? '').replace(/[\r\n]+/g, ' ').slice(0, 300);
          return `${failureKind(code, words)}: ${[code, words].filter(Boolean).join(' ')} (${label})`;
        },
      },
    );
  }
}

/** The client's own error (it names the address and the cause, never the password), else a plain word. */
function described(error: unknown, known: new (...args: never[]) => Error): string {
  if (error instanceof known) return `${failureKind(undefined, error.message)}: ${error.message}`;
  return 'failed: the PBX could not be reached';
}
