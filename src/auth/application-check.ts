import axios, { AxiosInstance } from 'axios';
import { PortalBudget } from '../portal/budget-waiters';
import { OAuthSettings } from './oauth-settings';
import { PortalAddress } from './portal-address';

export type ApplicationCheckOutcome =
  | { confirmed: true }
  /** `unreachable`: the portal could not be asked, which says nothing about the post. */
  | { confirmed: false; unreachable: boolean; reason: string };

interface AppInfoAnswer {
  result?: { client_id?: unknown; CODE?: unknown; member_id?: unknown };
  error?: unknown;
}

/**
 * Asks the configured portal (never an address from the post) whether an access token belongs to this
 * application and this portal: `app.info` names the application (`client_id`, or its `CODE`) and the
 * portal's `member_id`. A forged install post fails here and plants nothing.
 */
export class ApplicationCheck {
  private readonly http: AxiosInstance;

  constructor(
    private readonly settings: OAuthSettings,
    private readonly address: PortalAddress,
    private readonly budget: PortalBudget,
  ) {
    this.http = axios.create({ timeout: settings.timeoutMs, maxRedirects: 0, validateStatus: () => true });
  }

  async confirm(accessToken: string, memberId: string): Promise<ApplicationCheckOutcome> {
    await this.budget.acquire('interactive');
    let status: number;
    let answer: AppInfoAnswer;
    try {
      const response = await this.http.post<unknown>(
        this.address.restUrl('app.info'),
        {},
        { headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${accessToken}` } },
      );
      status = response.status;
      answer = typeof response.data === 'object' && response.data !== null ? response.data : {};
    } catch (error) {
      const code = axios.isAxiosError(error) ? (error.code ?? 'network error') : 'network error';
      return { confirmed: false, unreachable: true, reason: `the portal did not answer app.info (${code})` };
    }
    const result = answer.result;
    if (status >= 500 || status === 429) {
      return {
        confirmed: false,
        unreachable: true,
        reason: `the portal answered app.info with HTTP ${status}`,
      };
    }
    if (status !== 200 || !result) {
      const code = typeof answer.error === 'string' ? answer.error : `HTTP ${status}`;
      return {
        confirmed: false,
        unreachable: false,
        reason: `the portal refused the posted token (${code})`,
      };
    }
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
}
