/** Who the portal says the AUTH_ID belongs to. */
export interface ConfirmedUser {
  userId: number;
  name: string;
  admin: boolean;
}

/**
 * Asks the portal's own REST endpoint (the one its verified install named, never the posted DOMAIN) who holds
 * `authId` (`user.current`) and whether that user administers the portal (`user.admin`). Undefined when the
 * portal refuses the token or cannot be asked: the page then believes nothing.
 */
export async function confirmUser(
  clientEndpoint: string,
  authId: string,
  timeoutMs: number,
): Promise<ConfirmedUser | undefined> {
  const current = await restCall(clientEndpoint, 'user.current', authId, timeoutMs);
  if (!current || typeof current !== 'object') return undefined;
  const row = current as Record<string, unknown>;
  const userId = Number(row.ID);
  if (!Number.isInteger(userId) || userId < 1) return undefined;
  const admin = await restCall(clientEndpoint, 'user.admin', authId, timeoutMs);
  const name = [row.NAME, row.LAST_NAME].filter((part) => typeof part === 'string' && part).join(' ');
  return { userId, name, admin: admin === true };
}

async function restCall(
  endpoint: string,
  method: string,
  authId: string,
  timeoutMs: number,
): Promise<unknown> {
  try {
    const response = await fetch(new URL(`${method}.json`, endpoint), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ auth: authId }),
      redirect: 'error',
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) return undefined;
    const envelope = (await response.json()) as { result?: unknown };
    return envelope.result;
  } catch {
    return undefined;
  }
}
