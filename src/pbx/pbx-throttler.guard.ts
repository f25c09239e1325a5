import { Injectable } from '@nestjs/common';
import { ThrottlerGuard, ThrottlerRequest } from '@nestjs/throttler';
import { createHash } from 'node:crypto';
import type { Request } from 'express';
import { presentedToken } from '../common/presented-token';

/** The throttler counting a PBX token's writes (posts, recordings): PBX_RATE_LIMIT_RPS. */
export const PBX_WRITES = 'writes';
/** The throttler counting its reads (call status, lookups): PBX_READ_RATE_LIMIT_RPS. */
export const PBX_READS = 'reads';

/** Reads change nothing and cost one keyed store read (or a cached lookup): counted apart from writes. */
export function pbxRequestKind(request: { method?: string }): typeof PBX_WRITES | typeof PBX_READS {
  return request.method === 'GET' || request.method === 'HEAD' ? PBX_READS : PBX_WRITES;
}

/**
 * Counts requests per PBX token (hashed, never kept in clear), so one flooding PBX gets 429 alone. Reads
 * and writes have limits of their own: a PBX reading the status of the calls it just posted spends none of
 * its write budget, and a PBX polling statuses in a loop cannot starve its own posts.
 */
@Injectable()
export class PbxThrottlerGuard extends ThrottlerGuard {
  protected override async getTracker(request: Record<string, unknown>): Promise<string> {
    const token = presentedToken(request as unknown as Request) ?? '';
    return createHash('sha256').update(token).digest('hex').slice(0, 32);
  }

  /** Each request is counted by the throttler of its kind only. */
  protected override handleRequest(props: ThrottlerRequest): Promise<boolean> {
    const { req } = this.getRequestResponse(props.context);
    if (props.throttler.name !== pbxRequestKind(req as { method?: string })) return Promise.resolve(true);
    return super.handleRequest(props);
  }

  /** A refused PBX reads the standard `Retry-After`, not the throttler's per-name `Retry-After-reads`. */
  protected override setResponseHeader(
    response: Record<string, unknown>,
    name: string,
    value: string | number,
  ): void {
    super.setResponseHeader(
      response,
      name === `Retry-After-${PBX_READS}` || name === `Retry-After-${PBX_WRITES}` ? 'Retry-After' : name,
      value,
    );
  }
}
