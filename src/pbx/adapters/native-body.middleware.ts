import { HttpStatus } from '@nestjs/common';
import express from 'express';
import type { NextFunction, Request, Response } from 'express';

type BodyParser = (request: Request, response: Response, done: (error?: { type?: string }) => void) => void;

/**
 * The body encodings PBXs post in. `base64-form` is mod_json_cdr's `encode=base64`: the content type
 * `application/x-www-form-base64-encoded` and the body `cdr=<base64 of the JSON>`, turned into the same
 * `{cdr: "<JSON>"}` its `encode=true` form gives.
 */
export type NativeEncoding = 'json' | 'form' | 'base64-form';

const CONTENT_TYPES: Record<NativeEncoding, string[]> = {
  json: ['application/json', 'application/*+json'],
  form: ['application/x-www-form-urlencoded'],
  'base64-form': ['application/x-www-form-base64-encoded'],
};

/**
 * Bodies of the adapter routes, with the JSON API's answers: 415 for a content type the PBX does not post
 * (naming the ones accepted), 413 past PBX_BODY_LIMIT, 400 for a body that does not parse.
 */
export function nativeBody(limitBytes: number, encodings: NativeEncoding[]) {
  const parsers: Record<NativeEncoding, BodyParser> = {
    json: express.json({ limit: limitBytes, strict: false, type: () => true }),
    form: express.urlencoded({ limit: limitBytes, extended: false, type: () => true }),
    'base64-form': express.text({ limit: limitBytes, type: () => true }),
  };
  const accepted = encodings.flatMap((encoding) => CONTENT_TYPES[encoding]);
  return (request: Request, response: Response, next: NextFunction) => {
    if (!['POST', 'PUT', 'PATCH'].includes(request.method)) return next();
    const encoding = encodings.find((candidate) => request.is(CONTENT_TYPES[candidate]));
    if (!encoding) {
      return reply(
        response,
        HttpStatus.UNSUPPORTED_MEDIA_TYPE,
        `Content-Type must be ${accepted.join(' or ')}`,
      );
    }
    parsers[encoding](request, response, (error?: { type?: string }) => {
      if (!error) return encoding === 'base64-form' ? decodeBase64Form(request, response, next) : next();
      if (error.type === 'entity.too.large') {
        return reply(response, HttpStatus.PAYLOAD_TOO_LARGE, `the body is larger than ${limitBytes} bytes`);
      }
      if (error.type === 'encoding.unsupported' || error.type === 'charset.unsupported') {
        return reply(response, HttpStatus.UNSUPPORTED_MEDIA_TYPE, 'the body must be UTF-8');
      }
      reply(
        response,
        HttpStatus.BAD_REQUEST,
        `the body is not valid ${encoding === 'json' ? 'JSON' : 'form data'}`,
      );
    });
  };
}

function decodeBase64Form(request: Request, response: Response, next: NextFunction): void {
  const raw = typeof request.body === 'string' ? request.body.trim() : '';
  const value = raw.startsWith('cdr=') ? raw.slice('cdr='.length) : raw;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(value)) {
    return reply(response, HttpStatus.BAD_REQUEST, 'the body is not cdr=<base64>');
  }
  request.body = { cdr: Buffer.from(value, 'base64').toString('utf8') };
  next();
}

function reply(response: Response, status: number, message: string): void {
  response.status(status).json({ statusCode: status, message });
}
