import {
  CanActivate,
  ExecutionContext,
  ForbiddenException,
  Injectable,
  UnauthorizedException,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import { digestsOf, matchesAny } from '../common/secrets';
import { SecuritySettings } from '../config/settings';
import { presentedToken } from '../common/presented-token';
import { OAuthService } from './oauth.service';

/**
 * `/oauth/start` hands out the right to replace the bridge's tokens, so it needs `ADMIN_TOKEN`: as Bearer,
 * as the password of HTTP Basic (a browser asks for it), or as `?token=` (a bookmark). Without ADMIN_TOKEN
 * set it is closed. In webhook mode the route answers 404 as the other OAuth routes do.
 */
@Injectable()
export class OAuthStartGuard implements CanActivate {
  private readonly accepted: Buffer[];

  constructor(
    security: SecuritySettings,
    private readonly oauth: OAuthService,
  ) {
    this.accepted = digestsOf(security.adminToken);
  }

  canActivate(context: ExecutionContext): boolean {
    if (!this.oauth.enabled) return true;
    if (!this.accepted.length) {
      throw new ForbiddenException(
        '/oauth/start is closed: set ADMIN_TOKEN on the bridge, then open /oauth/start with it',
      );
    }
    const request = context.switchToHttp().getRequest<Request>();
    const query = request.query?.token;
    const token = presentedToken(request) ?? (typeof query === 'string' && query !== '' ? query : undefined);
    if (!token || !matchesAny(token, this.accepted)) {
      context
        .switchToHttp()
        .getResponse<Response>()
        .setHeader('WWW-Authenticate', 'Basic realm="bridge /oauth/start", charset="UTF-8"');
      throw new UnauthorizedException(
        'the admin token is required: ADMIN_TOKEN as Bearer, as the Basic password, or as ?token=',
      );
    }
    return true;
  }
}
