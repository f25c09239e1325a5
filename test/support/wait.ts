import { eventually } from './bridge-harness';

/**
 * Resolves once the stored access token has died by the bridge's own clock (`accessExpiresAt`): the token's
 * lifetime is the portal's rule, kept by the bridge with the wall clock, so the spec waits on that state
 * rather than guessing a sleep past it.
 */
export async function untilAccessTokenExpired(
  storedTokens: () => Promise<{ accessExpiresAt: number } | undefined>,
): Promise<void> {
  await eventually(async () => {
    const tokens = await storedTokens();
    return tokens && Date.now() > tokens.accessExpiresAt ? true : undefined;
  });
}
