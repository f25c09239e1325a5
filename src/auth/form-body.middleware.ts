import { HttpStatus } from '@nestjs/common';
import express from 'express';
import type { NextFunction, Request, Response } from 'express';

/** Portal posts are small: a few dozen `auth[…]`/`data[…]` fields. */
const FORM_LIMIT_BYTES = 64 * 1024;

/** Portal posts nest fields two deep (`data[FIELDS][ID]`); one more level is room to spare. */
const FORM_DEPTH = 3;

/**
 * Form-encoded bodies of the portal's posts to the application (`auth[access_token]=…` becomes
 * `body.auth.access_token`). The app parses no body globally, so these routes parse their own.
 */
export function portalFormBody() {
  // body-parser hands `depth` to qs; its type definitions predate the option.
  const options = { extended: true, limit: FORM_LIMIT_BYTES, depth: FORM_DEPTH, type: () => true };
  const parse = formParser(express.urlencoded(options), `the body is larger than ${FORM_LIMIT_BYTES} bytes`, {
    'querystring.parse.rangeError': `the body nests fields more than ${FORM_DEPTH} deep, deeper than a portal post (data[FIELDS][ID])`,
  });
  return (request: Request, response: Response, next: NextFunction) =>
    request.method === 'POST' ? parse(request, response, next) : next();
}

/**
 * A form-encoded body through `parse`: 415 for another type, 413 past its limit (`tooLarge`), 400 for a
 * parse error of a type in `refusals` (its message) or any other broken form.
 */
export function formParser(
  parse: (request: Request, response: Response, next: (error?: { type?: string }) => void) => void,
  tooLarge: string,
  refusals: Record<string, string> = {},
) {
  return (request: Request, response: Response, next: NextFunction) => {
    if (!request.is('application/x-www-form-urlencoded')) {
      return reply(
        response,
        HttpStatus.UNSUPPORTED_MEDIA_TYPE,
        'Content-Type must be application/x-www-form-urlencoded',
      );
    }
    parse(request, response, (error?: { type?: string }) => {
      if (!error) return next();
      if (error.type === 'entity.too.large') return reply(response, HttpStatus.PAYLOAD_TOO_LARGE, tooLarge);
      const refusal = error.type === undefined ? undefined : refusals[error.type];
      reply(response, HttpStatus.BAD_REQUEST, refusal ?? 'the body is not a valid form');
    });
  };
}

function reply(response: Response, status: number, message: string): void {
  response.status(status).json({ statusCode: status, message });
}
