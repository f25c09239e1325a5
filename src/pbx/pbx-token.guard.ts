import {
  CanActivate,
  createParamDecorator,
  ExecutionContext,
  Inject,
  Injectable,
  Optional,
  ServiceUnavailableException,
  UnauthorizedException,
} from '@nestjs/common';
import type { Request } from 'express';
import { timingSafeEqual } from 'node:crypto';
import { digest, matchesAny } from '../common/secrets';
import { presentedToken } from '../common/presented-token';
import { AppConfig } from '../config/app-config';
import { PORTAL_ID } from '../config/portal-id';
import { SecuritySettings } from '../config/settings';
import { PortalStore } from '../store/portal-store';

/** Where `admit` leaves the portal the request's PBX token belongs to. */
const PORTAL_OF_REQUEST = Symbol('pbxPortal');

type AdmittedRequest = Request & { [PORTAL_OF_REQUEST]?: string };

/** The portal of the request's PBX token (its `@PbxPortal() portalId: string` parameter). */
export const PbxPortal = createParamDecorator((_: unknown, context: ExecutionContext): string => {
  const portal = context.switchToHttp().getRequest<AdmittedRequest>()[PORTAL_OF_REQUEST];
  if (portal === undefined) throw new UnauthorizedException('a valid PBX token is required');
  return portal;
});

const REFUSAL =
  'a valid PBX token is required: Authorization: Bearer <token> or Basic (adapter routes: ?token=)';

/**
 * Guards the PBX routes and tells which portal the PBX belongs to. Guards run after middleware, so the body
 * parsers call `admit` first themselves: nobody without a token gets a body read, parsed or measured.
 * Single-portal mode: PBX_TOKENS and the tokens created on the application's page, all of PORTAL_ID. Many portals (docs/API.md): the tokens each portal's
 * operator issued (`/v1/admin/portals/:portalId/pbx-tokens`), found by their SHA-256 and compared in
 * constant time; a PBX only ever reaches its own portal.
 */
@Injectable()
export class PbxTokenGuard implements CanActivate {
  private readonly accepted: Buffer[];
  private readonly multi: boolean;

  constructor(
    security: SecuritySettings,
    config: AppConfig,
    @Inject(PORTAL_ID) private readonly portalId: string,
    @Optional() private readonly portals?: PortalStore,
  ) {
    this.accepted = security.pbxTokens.map(digest);
    this.multi = config.B24_APP_MODE === 'multi';
  }

  /** Throws the 401 unless the request carries a PBX token; returns (and remembers) its portal. */
  async admit(request: Request): Promise<string> {
    const admitted = request as AdmittedRequest;
    const known = admitted[PORTAL_OF_REQUEST];
    if (known !== undefined) return known;
    const token = presentedToken(request);
    const portal = token === undefined ? undefined : await this.portalOf(token);
    if (portal === undefined) throw new UnauthorizedException(REFUSAL);
    admitted[PORTAL_OF_REQUEST] = portal;
    return portal;
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    await this.admit(context.switchToHttp().getRequest<Request>());
    return true;
  }

  private async portalOf(token: string): Promise<string | undefined> {
    // Single mode: PBX_TOKENS first (no store read), then the tokens created on the page for its portal.
    if (!this.multi && matchesAny(token, this.accepted)) return this.portalId;
    if (!this.portals) return undefined;
    const presented = digest(token);
    let found: Awaited<ReturnType<PortalStore['findPbxToken']>>;
    try {
      found = await this.portals.findPbxToken(presented.toString('hex'));
    } catch {
      // The store is down: nothing could be stored anyway; the PBX sends again, as after any 503.
      throw new ServiceUnavailableException(
        'the store cannot check the PBX token now; nothing was stored, retry',
      );
    }
    // The lookup by digest finds the candidate; the comparison that decides is constant-time.
    if (!found || !timingSafeEqual(presented, Buffer.from(found.digest, 'hex'))) return undefined;
    // A row of another portal (a database once used with many portals) reaches nothing here.
    if (!this.multi && found.portalId !== this.portalId) return undefined;
    return found.portalId;
  }
}
