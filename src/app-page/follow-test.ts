import { Injectable } from '@nestjs/common';
import { EgressPolicy } from '../common/egress';
import { AmiSession, parseAmiTarget } from '../follow/ami/ami-session';
import { EslSession, parseEslTarget } from '../follow/esl/esl-session';
import { CdrSource, parseCdrTarget } from '../follow/ledger/cdr-source';
import { PbxTarget } from '../follow/pbx-connection';
import { ConnectionOutcome, TEST_TIMEOUT_MS, testConnection } from './connection-test';

/** The follow settings' addresses a "test connection" tries, each beside its own field. */
export type FollowAddress = 'AMI_URL' | 'ESL_URL' | 'ASTERISK_CDR_URL';

/**
 * "Test connection" of the page's PBX-events settings (already checked as the admin API checks them): the
 * clients the followers use connect and log in, each within TEST_TIMEOUT_MS, and leave: AMI (banner,
 * `Login`, `Logoff`), the event socket (`auth`, `exit`), the CDR ledger (MySQL login, one read of `cdr`).
 * Every socket is a Destination of the deployment's egress policy (SPEC §8), so a name that resolves into
 * this deployment's network is never connected to. The answers are connection-test.ts's: ok, `login
 * refused`, `not allowed`, or `unreachable` (alike for a closed port, a silent one and another protocol);
 * never a server's words, never a password. Nothing is followed or stored.
 */
@Injectable()
export class FollowTest {
  constructor(private readonly egress: EgressPolicy) {}

  async test(follow: Record<string, string>): Promise<Partial<Record<FollowAddress, ConnectionOutcome>>> {
    const tried: [FollowAddress, (url: string) => Promise<ConnectionOutcome>][] = [];
    if (follow.PBX_EVENTS === 'ami' && follow.AMI_URL) tried.push(['AMI_URL', (url) => this.ami(url)]);
    if (follow.PBX_EVENTS === 'esl' && follow.ESL_URL) tried.push(['ESL_URL', (url) => this.esl(url)]);
    if (follow.ASTERISK_CDR_URL) tried.push(['ASTERISK_CDR_URL', (url) => this.ledger(url)]);
    return Object.fromEntries(
      await Promise.all(tried.map(async ([name, test]) => [name, await test(follow[name])] as const)),
    );
  }

  private ami(url: string): Promise<ConnectionOutcome> {
    const target = parseAmiTarget(url, this.egress);
    return session(target, 'Asterisk Manager Interface', (at, options) => AmiSession.open(at, options));
  }

  private esl(url: string): Promise<ConnectionOutcome> {
    const target = parseEslTarget(url, this.egress);
    return session(target, 'FreeSWITCH event socket', (at, options) => EslSession.open(at, options));
  }

  private ledger(url: string): Promise<ConnectionOutcome> {
    const target = parseCdrTarget(url, this.egress);
    if ('problem' in target) return Promise.resolve(refused(target.problem));
    return testConnection(
      async () => {
        const source = new CdrSource(target, TEST_TIMEOUT_MS);
        try {
          await source.check();
        } finally {
          await source.close();
        }
      },
      { what: 'MySQL server', label: target.destination.label },
    );
  }
}

type SessionOptions = { timeoutMs: number; onEvent: () => undefined; onClose: () => undefined };

/** A PBX session (AMI, the event socket) opened, logged in to and closed again. */
function session(
  target: PbxTarget | { problem: string },
  what: string,
  open: (target: PbxTarget, options: SessionOptions) => Promise<{ close(): void }>,
): Promise<ConnectionOutcome> {
  if ('problem' in target) return Promise.resolve(refused(target.problem));
  const options: SessionOptions = {
    timeoutMs: TEST_TIMEOUT_MS,
    onEvent: () => undefined,
    onClose: () => undefined,
  };
  return testConnection(async () => (await open(target, options)).close(), {
    what,
    label: target.destination.label,
  });
}

/**
 * A setting the policy refuses before any socket (the same check as saving it): said as the save says it,
 * naming the variable and the rule, never the value.
 */
function refused(problem: string): ConnectionOutcome {
  return { ok: false, reason: `not allowed: ${problem}` };
}
