import { HttpStatus } from '@nestjs/common';
import express from 'express';
import type { NextFunction, Request, Response } from 'express';

/** The portal's post and the page's forms are a few fields. */
const FORM_LIMIT_BYTES = 16 * 1024;

/**
 * Form bodies of `/app` (Nest's global parser is off): flat fields only (`extended: false`), 413 past 16 KB,
 * 415 for another type (a form post of the page or the portal is always form-encoded).
 */
export function appPageFormBody() {
  const parse = express.urlencoded({ extended: false, limit: FORM_LIMIT_BYTES, parameterLimit: 100 });
  return (request: Request, response: Response, next: NextFunction) => {
    const length = Number(request.headers['content-length'] ?? 0);
    if (!request.headers['transfer-encoding'] && length === 0) {
      request.body = {};
      return next();
    }
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
          `the form is larger than ${FORM_LIMIT_BYTES} bytes`,
        );
      }
      reply(response, HttpStatus.BAD_REQUEST, 'the body is not a valid form');
    });
  };
}

function reply(response: Response, status: number, message: string): void {
  response.status(status).json({ statusCode: status, message });
}

/** The posted form's fields (empty when the body is none). */
export function formOf(request: Request): Record<string, unknown> {
  const body: unknown = request.body;
  return typeof body === 'object' && body !== null && !Array.isArray(body)
    ? (body as Record<string, unknown>)
    : {};
}
