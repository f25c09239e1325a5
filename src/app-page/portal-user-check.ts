import { PortalBudget } from '../portal/budget-waiters';

/** Who the portal says the AUTH_ID belongs to. */
export interface ConfirmedUser {
  userId: number;
  name: string;
  admin: boolean;
}

/** A call's answer: the result, the portal's refusal of the token, or no answer (an outage, no budget). */
type Answer = { result: unknown } | { refused: true } | { unreachable: true };

/**
 * Asks the portal's own REST endpoint (the one its verified install named, never the posted DOMAIN) who holds
 * `authId` (`user.current`) and whether that user administers the portal (`user.admin`). Each call waits
 * for the portal's request budget (`budget`, background priority, within `timeoutMs`), so the page never
 * sends the portal more than delivery may. Undefined when the portal refuses the token or cannot be asked:
 * the page then believes nothing.
 */
export async function confirmUser(
  clientEndpoint: string,
  authId: string,
  timeoutMs: number,
  budget: PortalBudget | undefined,
): Promise<ConfirmedUser | undefined> {
  const current = await restCall(clientEndpoint, 'user.current', authId, timeoutMs, budget);
  if (!('result' in current) || !current.result || typeof current.result !== 'object') return undefined;
  const row = current.result as Record<string, unknown>;
  const userId = Number(row.ID);
  if (!Number.isInteger(userId) || userId < 1) return undefined;
  const admin = await restCall(clientEndpoint, 'user.admin', authId, timeoutMs, budget);
  const name = [row.NAME, row.LAST_NAME].filter((part) => typeof part === 'string' && part).join(' ');
  return { userId, name, admin: 'result' in admin && admin.result === true };
}

/**
 * Asks the portal again whether the holder of `authId` administers it (`user.admin`): `refused` when the
 * portal no longer takes the token (it expired, the user was deactivated, the application removed),
 * `unreachable` when it could not be asked now.
 */
export async function recheckAdmin(
  clientEndpoint: string,
  authId: string,
  timeoutMs: number,
  budget: PortalBudget | undefined,
): Promise<boolean | 'refused' | 'unreachable'> {
  const answer = await restCall(clientEndpoint, 'user.admin', authId, timeoutMs, budget);
  if ('refused' in answer) return 'refused';
  if ('unreachable' in answer) return 'unreachable';
  return answer.result === true;
}

/**
 * One call with the user's token, on a unit of the portal's budget. A 503 QUERY_LIMIT_EXCEEDED (the portal's
 * bucket is fuller than the budget's mirror knew) tells the budget, as the portal client does, and the call
 * waits for its next unit, within the same deadline.
 */
async function restCall(
  endpoint: string,
  method: string,
  authId: string,
  timeoutMs: number,
  budget: PortalBudget | undefined,
): Promise<Answer> {
  const signal = AbortSignal.timeout(timeoutMs);
  for (;;) {
    let unit;
    try {
      unit = budget ? await budget.acquire('background', signal) : undefined;
    } catch {
      return { unreachable: true };
    }
    try {
      unit?.spend();
      const response = await fetch(new URL(`${method}.json`, endpoint), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ auth: authId }),
        redirect: 'error',
        signal,
      });
      const envelope = (await response.json().catch(() => ({}))) as { result?: unknown; error?: unknown };
      if (response.status === 503 && envelope.error === 'QUERY_LIMIT_EXCEEDED' && budget) {
        budget.onRejected();
        continue;
      }
      if (response.status === 429 || response.status >= 500) return { unreachable: true };
      budget?.onAccepted();
      if (!response.ok || envelope.result === undefined) return { refused: true };
      return { result: envelope.result };
    } catch {
      return { unreachable: true };
    } finally {
      unit?.giveBack();
    }
  }
}
