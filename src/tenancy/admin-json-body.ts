import { HttpStatus, UnauthorizedException } from '@nestjs/common';
import express from 'express';
import type { NextFunction, Request, Response } from 'express';
import { AdminTokenGuard } from '../admin/admin-token.guard';

/** Settings and token labels are a few hundred bytes. */
const LIMIT_BYTES = 16 * 1024;

/**
 * JSON bodies of `/v1/admin/portals` (Nest's global parser is off): the admin token is checked before a
 * byte is read; an empty body is `{}`; 415 for another type, 413 past 16 KB, 400 when it does not parse.
 */
export function adminJsonBody(admin: AdminTokenGuard) {
  const parse = express.json({ limit: LIMIT_BYTES, strict: false, type: () => true });
  return (request: Request, response: Response, next: NextFunction) => {
    if (!admin.admits(request)) {
      throw new UnauthorizedException(
        'the admin token is required (set ADMIN_TOKEN on the bridge to enable /v1/admin)',
      );
    }
    const length = Number(request.headers['content-length'] ?? 0);
    if (!request.headers['transfer-encoding'] && length === 0) {
      request.body = {};
      return next();
    }
    if (!request.is(['application/json', 'application/*+json'])) {
      return reply(response, HttpStatus.UNSUPPORTED_MEDIA_TYPE, 'Content-Type must be application/json');
    }
    parse(request, response, (error?: { type?: string }) => {
      if (!error) return next();
      if (error.type === 'entity.too.large') {
        return reply(response, HttpStatus.PAYLOAD_TOO_LARGE, `the body is larger than ${LIMIT_BYTES} bytes`);
      }
      return reply(response, HttpStatus.BAD_REQUEST, 'the body is not valid JSON');
    });
  };
}

function reply(response: Response, status: HttpStatus, message: string): void {
  response.status(status).json({ statusCode: status, message });
}
