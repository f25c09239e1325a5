import axios, { AxiosInstance } from 'axios';
import { PortalBudget } from '../portal/budget-waiters';
import { OAuthSettings } from './oauth-settings';
import { PortalAddress } from './portal-address';

export type ApplicationCheckOutcome =
  | { confirmed: true }
  /** `unreachable`: the portal could not be asked, which says nothing about the post. */
  | { confirmed: false; unreachable: boolean; reason: string };

/** How long a check may wait for the request budget and the portal's answer together. */
export const CHECK_DEADLINE_MS = 10_000;
/** app.info and user.admin answer a few hundred bytes. */
const MAX_ANSWER_BYTES = 64 * 1024;

interface PortalAnswer<T> {
  result?: T;
  error?: unknown;
}

interface AppInfo {
  client_id?: unknown;
  CODE?: unknown;
  member_id?: unknown;
}

/**
 * Asks the configured portal (never an address from the post) about a token posted to the bridge:
 * `app.info` names the application (`client_id`, or its `CODE`) and the portal's `member_id`, so a forged
 * install post fails here and plants nothing; `user.admin` says whether the token's user administers the
 * portal. Each check waits for the budget at background priority within CHECK_DEADLINE_MS, so checks
 * never go ahead of lookups and never wait without end.
 */
export class ApplicationCheck {
  private readonly http: AxiosInstance;

  constructor(
    private readonly settings: OAuthSettings,
    private readonly address: PortalAddress,
    private readonly budget: PortalBudget,
  ) {
    this.http = axios.create({
      timeout: settings.timeoutMs,
      maxRedirects: 0,
      maxContentLength: MAX_ANSWER_BYTES,
      validateStatus: () => true,
    });
  }

  async confirm(accessToken: string, memberId: string): Promise<ApplicationCheckOutcome> {
    const answer = await this.ask<AppInfo>('app.info', accessToken);
    if (!answer.confirmed) return answer;
    const { result } = answer;
    if (result.client_id !== this.settings.clientId && result.CODE !== this.settings.clientId) {
      return {
        confirmed: false,
        unreachable: false,
        reason: 'the posted token belongs to another application',
      };
    }
    if (result.member_id !== undefined && result.member_id !== memberId) {
      return { confirmed: false, unreachable: false, reason: 'the post names another portal (member_id)' };
    }
    return { confirmed: true };
  }

  /** Whether the token's user is a portal administrator (`user.admin` answers true). */
  async confirmAdministrator(accessToken: string): Promise<ApplicationCheckOutcome> {
    const answer = await this.ask<unknown>('user.admin', accessToken);
    if (!answer.confirmed) return answer;
    if (answer.result === true || answer.result === 'true' || answer.result === 'Y') {
      return { confirmed: true };
    }
    return {
      confirmed: false,
      unreachable: false,
      reason: 'the authorising user is not a portal administrator (user.admin)',
    };
  }

  private async ask<T>(
    method: string,
    accessToken: string,
  ): Promise<{ confirmed: true; result: T } | Extract<ApplicationCheckOutcome, { confirmed: false }>> {
    const signal = AbortSignal.timeout(CHECK_DEADLINE_MS);
    try {
      await this.budget.acquire('background', signal);
    } catch {
      return {
        confirmed: false,
        unreachable: true,
        reason: `no turn of the portal's request budget within ${CHECK_DEADLINE_MS} ms for ${method}`,
      };
    }
    let status: number;
    let answer: PortalAnswer<T>;
    try {
      const response = await this.http.post<unknown>(
        this.address.restUrl(method),
        {},
        {
          signal,
          headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${accessToken}` },
        },
      );
      status = response.status;
      answer = typeof response.data === 'object' && response.data !== null ? response.data : {};
    } catch (error) {
      const code = axios.isAxiosError(error) ? (error.code ?? 'network error') : 'network error';
      return { confirmed: false, unreachable: true, reason: `the portal did not answer ${method} (${code})` };
    }
    if (status >= 500 || status === 429) {
      return {
        confirmed: false,
        unreachable: true,
        reason: `the portal answered ${method} with HTTP ${status}`,
      };
    }
    if (status !== 200 || answer.result === undefined || answer.result === null) {
      const code = typeof answer.error === 'string' ? answer.error : `HTTP ${status}`;
      return {
        confirmed: false,
        unreachable: false,
        reason: `the portal refused the token (${code.slice(0, 100)})`,
      };
    }
    return { confirmed: true, result: answer.result };
  }
}
