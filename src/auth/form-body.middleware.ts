import { HttpStatus } from '@nestjs/common';
import express from 'express';
import type { NextFunction, Request, Response } from 'express';

/** Portal posts are small: a few dozen `auth[…]`/`data[…]` fields. */
const FORM_LIMIT_BYTES = 64 * 1024;

/**
 * Form-encoded bodies of the portal's posts to the application (`auth[access_token]=…` becomes
 * `body.auth.access_token`). The app parses no body globally, so these routes parse their own.
 */
export function portalFormBody() {
  const parse = express.urlencoded({ extended: true, limit: FORM_LIMIT_BYTES, type: () => true });
  return (request: Request, response: Response, next: NextFunction) => {
    if (request.method !== 'POST') return next();
    if (!request.is('application/x-www-form-urlencoded')) {
      return reply(
        response,
        HttpStatus.UNSUPPORTED_MEDIA_TYPE,
        'Content-Type must be application/x-www-form-urlencoded',
      );
    }
    parse(request, response, (error?: { type?: string }) => {
      if (!error) return next();
      if (error.type === 'entity.too.large') {
        return reply(
          response,
          HttpStatus.PAYLOAD_TOO_LARGE,
          `the body is larger than ${FORM_LIMIT_BYTES} bytes`,
        );
      }
      reply(response, HttpStatus.BAD_REQUEST, 'the body is not a valid form');
    });
  };
}

function reply(response: Response, status: number, message: string): void {
  response.status(status).json({ statusCode: status, message });
}
