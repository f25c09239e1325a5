import { Injectable } from '@nestjs/common';
import { ThrottlerGuard } from '@nestjs/throttler';
import { createHash } from 'node:crypto';
import type { Request } from 'express';
import { presentedToken } from '../common/presented-token';

/** Counts requests per PBX token (hashed, never kept in clear), so one flooding PBX gets 429 alone. */
@Injectable()
export class PbxThrottlerGuard extends ThrottlerGuard {
  protected override async getTracker(request: Record<string, unknown>): Promise<string> {
    const token = presentedToken(request as unknown as Request) ?? '';
    return createHash('sha256').update(token).digest('hex').slice(0, 32);
  }
}
