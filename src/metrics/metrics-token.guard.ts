import { CanActivate, ExecutionContext, Injectable, UnauthorizedException } from '@nestjs/common';
import type { Request } from 'express';
import { SecuritySettings } from '../config/settings';
import { digestsOf, matchesAny } from '../common/secrets';
import { presentedToken } from '../common/presented-token';

/**
 * `GET /metrics` takes `Authorization: Bearer <METRICS_TOKEN>` when METRICS_TOKEN is set; unset, it stays
 * open for scrapers inside the cluster. The metrics show call volumes and portal state, not secrets.
 */
@Injectable()
export class MetricsTokenGuard implements CanActivate {
  private readonly accepted: Buffer[];

  constructor(security: SecuritySettings) {
    this.accepted = digestsOf(security.metricsToken);
  }

  canActivate(context: ExecutionContext): boolean {
    if (!this.accepted.length) return true;
    const token = presentedToken(context.switchToHttp().getRequest<Request>());
    if (!token || !matchesAny(token, this.accepted)) {
      throw new UnauthorizedException('the metrics token is required: Authorization: Bearer <METRICS_TOKEN>');
    }
    return true;
  }
}
