import { Injectable } from '@nestjs/common';
import { OAuthCredentials } from '../auth/oauth-credentials';
import { sameSecret } from '../common/secrets';
import { AppConfig } from '../config/app-config';
import { PortalCredentials } from '../portal/portal-credentials';

/**
 * Which application token a portal event post must carry (docs/API.md): in OAuth mode the installed
 * application's (stored at install), in webhook mode `B24_APPLICATION_TOKEN`. Compared in constant time;
 * with none configured nothing is accepted.
 */
@Injectable()
export class PortalEventTokens {
  private readonly webhookToken?: string;

  constructor(
    config: AppConfig,
    private readonly credentials: PortalCredentials,
  ) {
    this.webhookToken = config.B24_APPLICATION_TOKEN;
  }

  async accepts(candidate: string | undefined): Promise<boolean> {
    if (!candidate) return false;
    if (this.credentials instanceof OAuthCredentials) return this.credentials.isApplicationToken(candidate);
    return this.webhookToken !== undefined && sameSecret(this.webhookToken, candidate);
  }
}
