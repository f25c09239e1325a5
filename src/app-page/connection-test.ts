import { EgressRefused, isCredentialsRefused } from '../common/egress';

/** How long a "test connection" of the application's page waits for the PBX (or its CDR database), at most. */
export const TEST_TIMEOUT_MS = 5000;

/** What a "test connection" shows: ok, or one of three answers, none of which quotes the server. */
export type ConnectionOutcome = { ok: true } | { ok: false; reason: string };

export interface ConnectionTestOptions {
  /** The protocol, as the answer names it: `Asterisk Manager Interface`, `MySQL server`, … */
  what: string;
  /** The address without credentials (`host:port`). */
  label: string;
  timeoutMs?: number;
}

/**
 * One "test connection" of the application's page (SPEC §8: no port scanning through it, no server's own
 * words). `attempt` connects, logs in and leaves. The answer is one of:
 * - ok;
 * - `login refused`: the server spoke the protocol and refused the credentials (the connector marks that
 *   error, `isCredentialsRefused`); its words are not shown;
 * - `not allowed`: this deployment does not let a portal's settings reach that address (the egress gate);
 * - `unreachable`: anything else (nothing listens, something refuses or speaks another protocol, TLS fails,
 *   no answer in time), always the same words and always at the deadline, so neither the text nor the time
 *   tells an open port from a closed one.
 * A late success still closes what it opened; nobody waits for it.
 */
export async function testConnection(
  attempt: () => Promise<void>,
  options: ConnectionTestOptions,
): Promise<ConnectionOutcome> {
  const timeoutMs = options.timeoutMs ?? TEST_TIMEOUT_MS;
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), timeoutMs);
  });
  const run = attempt().then(
    () => 'ok' as const,
    (error: unknown) => error,
  );
  try {
    const outcome = await Promise.race([run, late]);
    if (outcome === 'ok') return { ok: true };
    if (isCredentialsRefused(outcome)) {
      return {
        ok: false,
        reason: `login refused: the ${options.what} at ${options.label} refused the user name or password`,
      };
    }
    if (outcome instanceof EgressRefused || (outcome as { code?: string })?.code === 'EGRESS_REFUSED') {
      return {
        ok: false,
        reason: `not allowed: ${options.label} is in a range this deployment does not let a portal's settings reach`,
      };
    }
    // The same answer at the same moment, whatever the failure was.
    if (outcome !== 'late') {
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + timeoutMs - Date.now())));
    }
    return {
      ok: false,
      reason: `unreachable: no ${options.what} answered at ${options.label} within ${timeoutMs} ms (nothing listens there, something else does, or TLS failed)`,
    };
  } finally {
    clearTimeout(timer);
  }
}
