import { CanActivate, ExecutionContext, Injectable, UnauthorizedException } from '@nestjs/common';
import type { Request } from 'express';
import { digestsOf, matchesAny } from '../common/secrets';
import { SecuritySettings } from '../config/settings';
import { presentedToken } from '../common/presented-token';

/** `/v1/admin` needs `ADMIN_TOKEN` (Bearer or Basic); with no ADMIN_TOKEN set the admin API is closed. */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  private readonly accepted: Buffer[];

  constructor(security: SecuritySettings) {
    this.accepted = digestsOf(security.adminToken);
  }

  /** Whether the request carries the admin token; the API documentation in production asks the same. */
  admits(request: Request): boolean {
    const token = presentedToken(request);
    return Boolean(token && matchesAny(token, this.accepted));
  }

  canActivate(context: ExecutionContext): boolean {
    if (!this.admits(context.switchToHttp().getRequest<Request>())) {
      throw new UnauthorizedException(
        'the admin token is required (set ADMIN_TOKEN on the bridge to enable /v1/admin)',
      );
    }
    return true;
  }
}
