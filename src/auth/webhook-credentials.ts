import { PortalCredentials, PreparedCall } from '../portal/portal-credentials';

/** Inbound webhook: `{base}/rest/<user_id>/<code>/<method>`; possession of the URL is the credential. */
export class WebhookCredentials extends PortalCredentials {
  readonly portalId: string;
  readonly displayName: string;
  private base: URL;

  constructor(
    webhookUrl: string,
    private readonly apiVersion?: 'v1',
    portalId?: string,
  ) {
    super();
    this.base = new URL(webhookUrl.endsWith('/') ? webhookUrl : `${webhookUrl}/`);
    this.portalId = portalId ?? this.base.hostname;
    const [, , userId] = this.base.pathname.split('/');
    this.displayName = `${this.base.origin}/rest/${userId}/*** (webhook)`;
  }

  async prepare(method: string): Promise<PreparedCall> {
    const headers: Record<string, string> = { 'Content-Type': 'application/json' };
    if (this.apiVersion) headers['API-Version'] = this.apiVersion;
    return { url: new URL(method, this.base).toString(), headers };
  }

  async renew(): Promise<boolean> {
    return false;
  }

  moveTo(origin: string): void {
    this.base = new URL(this.base.pathname, origin);
  }
}
