import { CanActivate, ExecutionContext, Injectable, UnauthorizedException } from '@nestjs/common';
import type { Request } from 'express';
import { digest, matchesAny } from '../common/secrets';
import { presentedToken } from '../common/presented-token';
import { SecuritySettings } from '../config/settings';

/**
 * Guards the PBX routes. Guards run after middleware, so the body parsers call `admit` first themselves:
 * nobody without a token gets a body read, parsed or measured.
 */
@Injectable()
export class PbxTokenGuard implements CanActivate {
  private readonly accepted: Buffer[];

  constructor(security: SecuritySettings) {
    this.accepted = security.pbxTokens.map(digest);
  }

  /** Throws the 401 unless the request carries one of PBX_TOKENS. */
  admit(request: Request): void {
    const token = presentedToken(request);
    if (!token || !matchesAny(token, this.accepted)) {
      throw new UnauthorizedException(
        'a valid PBX token is required: Authorization: Bearer <token> or Basic (adapter routes: ?token=)',
      );
    }
  }

  canActivate(context: ExecutionContext): boolean {
    this.admit(context.switchToHttp().getRequest<Request>());
    return true;
  }
}
