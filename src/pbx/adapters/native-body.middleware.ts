import { HttpStatus } from '@nestjs/common';
import express from 'express';
import type { NextFunction, Request, Response } from 'express';
import { nestsDeeperThan, verifyNesting } from '../body-nesting';
import { PbxTokenGuard } from '../pbx-token.guard';

type BodyParser = (request: Request, response: Response, done: (error?: { type?: string }) => void) => void;

/**
 * The body encodings PBXs post in. `base64-form` is mod_json_cdr's `encode=base64`: the content type
 * `application/x-www-form-base64-encoded` and the body `cdr=<base64 of the JSON>`, turned into the same
 * `{cdr: "<JSON>"}` its `encode=true` form gives.
 */
export type NativeEncoding = 'json' | 'form' | 'base64-form';

/** What one PBX's route takes. */
export interface NativeFormat {
  /** The PBX's record, for answers: "a Yeastar webhook". */
  record: string;
  encodings: NativeEncoding[];
  /** The deepest the PBX's record nests arrays and objects, with room to spare; deeper is refused unparsed. */
  maxDepth: number;
  /** A field carrying the record as JSON text (mod_json_cdr's `cdr`, Yeastar's `msg`): its nesting counts. */
  jsonField?: string;
}

const CONTENT_TYPES: Record<NativeEncoding, string[]> = {
  json: ['application/json', 'application/*+json'],
  form: ['application/x-www-form-urlencoded'],
  'base64-form': ['application/x-www-form-base64-encoded'],
};

/**
 * Bodies of the adapter routes, with the JSON API's answers: 401 before anything of the body is read,
 * 415 for a content type the PBX does not post (naming the ones accepted), 413 past PBX_BODY_LIMIT, 400 for
 * a body that does not parse or nests deeper than the PBX's record does.
 */
export function nativeBody(limitBytes: number, tokens: PbxTokenGuard, format: NativeFormat) {
  const parsers: Record<NativeEncoding, BodyParser> = {
    json: express.json({
      limit: limitBytes,
      strict: false,
      type: () => true,
      verify: verifyNesting(format.maxDepth),
    }),
    form: express.urlencoded({ limit: limitBytes, extended: false, type: () => true }),
    'base64-form': express.text({ limit: limitBytes, type: () => true }),
  };
  const accepted = format.encodings.flatMap((encoding) => CONTENT_TYPES[encoding]);
  const tooDeep = `the body nests arrays and objects more than ${format.maxDepth} deep, deeper than ${format.record}; nothing was stored`;
  // Async: Nest's middleware proxy turns a rejection (the 401) into its answer, as it does a throw.
  return async (request: Request, response: Response, next: NextFunction) => {
    if (!['POST', 'PUT', 'PATCH'].includes(request.method)) return next();
    await tokens.admit(request);
    const encoding = format.encodings.find((candidate) => request.is(CONTENT_TYPES[candidate]));
    if (!encoding) {
      return reply(
        response,
        HttpStatus.UNSUPPORTED_MEDIA_TYPE,
        `Content-Type must be ${accepted.join(' or ')}`,
      );
    }
    parsers[encoding](request, response, (error?: { type?: string }) => {
      if (!error) {
        if (encoding === 'base64-form' && !decodeBase64Form(request)) {
          return reply(response, HttpStatus.BAD_REQUEST, 'the body is not cdr=<base64>');
        }
        if (embeddedJsonTooDeep(request.body, format)) {
          return reply(response, HttpStatus.BAD_REQUEST, tooDeep);
        }
        return next();
      }
      if (error.type === 'entity.too.large') {
        return reply(response, HttpStatus.PAYLOAD_TOO_LARGE, `the body is larger than ${limitBytes} bytes`);
      }
      if (error.type === 'encoding.unsupported' || error.type === 'charset.unsupported') {
        return reply(response, HttpStatus.UNSUPPORTED_MEDIA_TYPE, 'the body must be UTF-8');
      }
      if (error.type === 'entity.too.deep') return reply(response, HttpStatus.BAD_REQUEST, tooDeep);
      reply(
        response,
        HttpStatus.BAD_REQUEST,
        `the body is not valid ${encoding === 'json' ? 'JSON' : 'form data'}`,
      );
    });
  };
}

/** `cdr=<base64>` becomes `{cdr: "<JSON>"}`; false when the body is not that. */
function decodeBase64Form(request: Request): boolean {
  const raw = typeof request.body === 'string' ? request.body.trim() : '';
  const value = raw.startsWith('cdr=') ? raw.slice('cdr='.length) : raw;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(value)) return false;
  request.body = { cdr: Buffer.from(value, 'base64').toString('utf8') };
  return true;
}

/** The adapter parses the JSON text of `jsonField` itself: its nesting, under the body's own, counts too. */
function embeddedJsonTooDeep(body: unknown, format: NativeFormat): boolean {
  if (!format.jsonField || typeof body !== 'object' || body === null) return false;
  const text = (body as Record<string, unknown>)[format.jsonField];
  return typeof text === 'string' && nestsDeeperThan(text, format.maxDepth - 1);
}

function reply(response: Response, status: number, message: string): void {
  response.status(status).json({ statusCode: status, message });
}
