/** How long a "test connection" of the application's page waits for the PBX (or its CDR database), at most. */
export const TEST_TIMEOUT_MS = 5000;

/** What a "test connection" shows: ok, or the cause (refused, bad credentials, timeout, TLS…) and its detail. */
export type ConnectionOutcome = { ok: true } | { ok: false; reason: string };

/**
 * One "test connection" of the application's page (the dial settings, the PBX-events settings): `attempt`
 * connects, logs in and leaves, and is given at most `timeoutMs` (a late success still closes what it opened,
 * nobody waits for it). A failure is named by its kind (`describe`: the client's own error class, whose
 * messages name the address and never the credentials) and, belt and braces, every secret is cut out of the
 * reason before anything shows or logs it.
 */
export async function testConnection(
  attempt: () => Promise<void>,
  options: { secrets: (string | undefined)[]; describe: (error: unknown) => string; timeoutMs?: number },
): Promise<ConnectionOutcome> {
  const timeoutMs = options.timeoutMs ?? TEST_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<ConnectionOutcome>((resolve) => {
    timer = setTimeout(
      () => resolve({ ok: false, reason: `timeout: no answer within ${timeoutMs} ms` }),
      timeoutMs,
    );
  });
  const run = attempt().then(
    (): ConnectionOutcome => ({ ok: true }),
    (error: unknown): ConnectionOutcome => ({ ok: false, reason: options.describe(error) }),
  );
  try {
    const outcome = await Promise.race([run, late]);
    return outcome.ok ? outcome : { ok: false, reason: redact(outcome.reason, options.secrets) };
  } finally {
    clearTimeout(timer);
  }
}

/** `refused: ECONNREFUSED tcp://pbx:5038`: the kind of a network failure first, from its code or words. */
export function failureKind(code: string | undefined, message: string): string {
  const text = `${code ?? ''} ${message}`;
  if (/ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|ECONNRESET|closed the connection/i.test(text)) return 'refused';
  if (/ENOTFOUND|EAI_AGAIN/i.test(text)) return 'unknown host';
  if (/login refused|access denied|authentication|ER_ACCESS_DENIED|-ERR invalid/i.test(text))
    return 'bad credentials';
  if (/ETIMEDOUT|within \d+ ms|timed? ?out/i.test(text)) return 'timeout';
  if (/CERT|SSL|ERR_TLS|EPROTO|self[- ]signed|certificate|handshake/i.test(text)) return 'TLS';
  return 'failed';
}

/**
 * The text with every secret (and its URL-encoded form) replaced by `***`; secrets of fewer than 4 characters
 * are left (they would cut letters out of every word, and the clients' messages never carry them anyway).
 */
export function redact(text: string, secrets: (string | undefined)[]): string {
  let safe = text;
  for (const secret of secrets) {
    if (!secret || secret.length < 4) continue;
    for (const form of new Set([secret, encodeURIComponent(secret)])) safe = safe.split(form).join('***');
  }
  return safe;
}
